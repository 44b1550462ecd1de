"""A run's judged numbers with a person's labels: per judged metric, the judge's agreement with the
labels and, per mode, the judge's raw mean, the PPI++ estimate with its interval and the labels-only
interval; differences between modes on the corrected estimates, decided by the one significance policy.

    result = calibrated_judged("runs/try")        # {metric: MetricCalibration}, judged metrics only
    result["faithfulness"].by_mode["bm25"].ci      # a Calibration (rag_lab.evaluate.statistics.calibrate)
    result["faithfulness"].agreement.line()        # n, κ, AUC, TPR/TNR over every mode's labels
    result["faithfulness"].comparisons             # each mode against the first; Holm over every calibrated metric

A judged metric without a label field (answer relevancy, the context metrics) or without labels is
``calibrated = False``: its verdict line says "not calibrated — `rag-lab label RUN`". The labels of
the labeller with the most verdicts count; a second labeller's are kept apart and their agreement
with the first (Cohen's κ) reported. ``na`` verdicts count as unlabelled. When ``--budget`` drew the
sample (``RUN/label_sample.json``), each mode's estimate is stratified by the draw's strata.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rag_lab.evaluate.statistics.agreement import Agreement, cohen_kappa, judge_agreement
from rag_lab.evaluate.statistics.calibrate import Calibration, calibrate
from rag_lab.evaluate.store.labels import LABEL_METRICS, latest, read_label_sample, read_labels, run_answers

NOT_CALIBRATED = "not calibrated — `rag-lab label RUN`"
NO_PERSON_VERDICT = "not calibrated — no person's verdict measures it (the page asks faithful and correct)"
NO_JUDGED_METRIC = ("no judged metric with a label field (faithfulness, factual_correctness): "
                    "run eval with --judge for labels to calibrate anything")
METRIC_LABELS = {metric: label for label, metric in LABEL_METRICS.items()}


@dataclass
class MetricCalibration:
    metric: str
    label: str | None  # the label field measuring it (faithful, correct), None: no person's verdict for it
    by_mode: dict[str, Calibration] = field(default_factory=dict)
    agreement: Agreement | None = None
    labeller: str | None = None
    people: tuple[str, float, int] | None = None  # (second labeller, κ with the first, samples both labelled)
    comparisons: list[dict] = field(default_factory=list)  # mode vs the first, on corrected values; Holm over the run
    corrected: dict[str, dict[str, float]] = field(default_factory=dict)  # mode → {sample id: corrected value}

    @property
    def calibrated(self) -> bool:
        return any(c.n_labelled for c in self.by_mode.values())

    def verdict(self) -> str:
        if self.label is None:
            return f"{self.metric}: {NO_PERSON_VERDICT}"
        if not self.calibrated:
            return f"{self.metric}: {NOT_CALIBRATED}"
        parts = [f"{mode} {c.estimate:.3f} [{c.ci[0]:.3f}, {c.ci[1]:.3f}]" if c.n_labelled >= 2
                 else f"{mode} {c.n_labelled} label{'s' if c.n_labelled != 1 else ''}, no interval"
                 for mode, c in self.by_mode.items()]
        flags = sorted({c.too_few_labels for c in self.by_mode.values() if c.too_few_labels})
        return (f"{self.metric} calibrated by {self.labeller}'s labels (PPI++): " + "; ".join(parts)
                + (f" — {flags[0]}" if flags else ""))


def _labelled(records: dict, metric: str) -> dict[str, list[tuple[str, float]]]:
    """mode → [(sample id, judge score)] of the samples the judge scored."""
    out = {}
    for mode, items in records.items():
        scored = [(str(r["id"]), (r.get("scores") or {}).get(metric)) for r in items]
        out[mode] = [(sid, float(s)) for sid, s in scored if isinstance(s, (int, float)) and np.isfinite(s)]
    return out


def calibrated_judged(run, alpha: float = 0.05) -> dict[str, MetricCalibration]:
    """``run``: a run folder (or a loaded ``EvalRun``) → {judged metric: MetricCalibration}, for every
    judged metric the run scored, in the run's metric order."""
    from rag_lab.evaluate.metrics import all_specs
    from rag_lab.evaluate.store.frames import EvalRun, load_run

    loaded = run if isinstance(run, EvalRun) else load_run(Path(run))
    judged = {s.name for s in all_specs() if s.judged}
    present = [m for m in dict.fromkeys(loaded.samples["metric"]) if m in judged] if not loaded.samples.empty else []
    labels = read_labels(loaded.path, run_answers(loaded.records))
    counts = Counter(label.labeller for label in labels if label.value != "na")
    labellers = [name for name, _ in counts.most_common()]
    verdicts = latest(labels)
    drawn = read_label_sample(loaded.path)
    strata_of = {(m, s): k for m, s, k in (drawn or {}).get("strata", [])}
    result = {}
    for metric in present:
        label = METRIC_LABELS.get(metric)
        entry = MetricCalibration(metric, label, labeller=labellers[0] if labellers else None)
        result[metric] = entry
        if label is None or not labellers:
            continue
        pooled_scores, pooled_labels = [], []
        for mode, scored in _labelled(loaded.records, metric).items():
            values = [_value(verdicts.get((entry.labeller, mode, sid, label))) for sid, _ in scored]
            scores = [s for _, s in scored]
            strata = [strata_of.get((mode, sid), -1) for sid, _ in scored] if drawn else None
            entry.by_mode[mode] = calibrate(scores, values, alpha, strata=strata)
            pooled_scores += [s for s, v in zip(scores, values) if v is not None]
            pooled_labels += [v for v in values if v is not None]
        if pooled_labels:
            entry.agreement = judge_agreement(pooled_scores, pooled_labels)
        if len(labellers) > 1:
            entry.people = _people(verdicts, labellers[0], labellers[1], label)
        entry.corrected = _corrected(loaded.records, metric, entry, verdicts, strata_of)
        entry.comparisons = _compare(entry)
    _correct_together([row for entry in result.values() for row in entry.comparisons], alpha)
    return result


def _correct_together(rows: list[dict], alpha: float) -> None:
    """The policy's correction over every corrected comparison of the run at once (one family)."""
    from rag_lab.evaluate.statistics.policy import adjust, is_significant

    adjusted = adjust([r["p_value"] for r in rows]) if rows else []
    for row, p_adj, significant in zip(rows, adjusted, is_significant(adjusted, alpha) if rows else []):
        row.update(p_adjusted=float(p_adj), significant=bool(significant), family=len(rows))


def _value(label) -> float | None:
    return None if label is None or label.value == "na" else float(label.value)


def _people(verdicts: dict, first: str, second: str, label: str) -> tuple[str, float, int]:
    mine = {(m, s): v.value for (who, m, s, metric), v in verdicts.items() if who == first and metric == label}
    theirs = {(m, s): v.value for (who, m, s, metric), v in verdicts.items() if who == second and metric == label}
    both = [k for k in mine if k in theirs and mine[k] != "na" and theirs[k] != "na"]
    return second, cohen_kappa([mine[k] for k in both], [theirs[k] for k in both]), len(both)


def _corrected(records: dict, metric: str, entry: MetricCalibration, verdicts: dict,
               strata_of: dict) -> dict[str, dict[str, float]]:
    """Per mode with labels, each question's corrected value — λ f + (y − λ f) / (share labelled, of
    the answer's stratum when ``--budget`` drew them) where labelled, λ f elsewhere — whose mean
    estimates the labels' mean without bias: what paired tests on corrected values read (the mode
    comparisons here, ``rag-lab compare`` across runs)."""
    values = {}
    for mode, c in entry.by_mode.items():
        if not c.n_labelled:
            continue
        scored = dict(_labelled(records, metric)[mode])
        lam = 1.0 if np.isnan(c.lam) else c.lam
        label_of = {sid: _value(verdicts.get((entry.labeller, mode, sid, entry.label))) for sid in scored}
        stratum = {sid: strata_of.get((mode, sid), -1) for sid in scored}
        members, labelled = Counter(stratum.values()), Counter(stratum[s] for s, y in label_of.items() if y is not None)
        corrected = {}
        for sid, score in scored.items():
            y, share = label_of[sid], labelled[stratum[sid]] / members[stratum[sid]]
            corrected[sid] = lam * score + ((y - lam * score) / share if y is not None else 0.0)
        values[mode] = corrected
    return values


def _compare(entry: MetricCalibration) -> list[dict]:
    """Each mode against the first on the per-question corrected values, by the policy's decision
    test (corrected over every calibrated metric's comparisons together by :func:`_correct_together`)."""
    from rag_lab.evaluate.statistics.policy import decide_pair

    modes, values = list(entry.corrected), entry.corrected
    rows = []
    for mode in modes[1:]:
        common = sorted(set(values[modes[0]]) & set(values[mode]))
        a = np.array([values[modes[0]][q] for q in common])
        b = np.array([values[mode][q] for q in common])
        p, decided, _ = decide_pair(a, b)
        rows.append({"mode": mode, "baseline": modes[0], "delta": entry.by_mode[mode].estimate
                     - entry.by_mode[modes[0]].estimate, "p_value": p, "decided_by": decided, "n_queries": len(common)})
    return rows


def verdict_lines(result: dict[str, MetricCalibration]) -> list[str]:
    """One line per judged metric: its calibrated estimates, or "not calibrated — `rag-lab label RUN`"."""
    return [entry.verdict() for entry in result.values()]
