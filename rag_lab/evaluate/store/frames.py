"""A run folder as tidy pandas frames (what notebooks, reports and the CLI table use).

    run = load_run("runs/try")
    run.samples   # one row per (mode, sample, metric): run, mode, kind, sample_id, metric, value
    run.summary   # one row per (mode, metric): mean, n (scored), nan (failed / NaN), applicable
    run.modes     # one row per mode: samples, errors, cached, latency p50/p95 (s), tokens, cost
    run.records   # {mode: [raw samples.jsonl records]}
    run.notes     # lines a reader must see: a cut-off last line skipped ("3 of 4 samples"), …
    split_label(run.manifest)  # which questions the tables average (eval --split)

Only the manifest's modes are read: a sub-folder left from an earlier run in the same folder is
not part of this run. A damaged samples line or manifest is an error naming the file and line.

``value`` is NaN where a metric applied but failed; a metric that does not apply to a sample
(e.g. ROUGE-L without a reference answer) has no row for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rag_lab.evaluate.store.run_folder import MANIFEST, SAMPLES

SAMPLE_COLUMNS = ["run", "mode", "kind", "sample_id", "metric", "value"]
SUMMARY_COLUMNS = ["mode", "metric", "mean", "n", "nan", "applicable"]
MODE_COLUMNS = ["mode", "samples", "errors", "unjudgeable", "cached", "latency_p50_s", "latency_p95_s", "retrieve_s",
                "generate_s", "score_s", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "cites_nothing",
                "non_answers", "citations_unverifiable", "dev_split"]
CONVERSATIONS = "conversations"


@dataclass
class EvalRun:
    path: Path
    manifest: dict[str, Any]
    records: dict[str, list[dict[str, Any]]]
    samples: pd.DataFrame = field(repr=False)
    summary: pd.DataFrame = field(repr=False)
    modes: pd.DataFrame = field(repr=False)
    notes: list[str] = field(default_factory=list)

    def table(self) -> pd.DataFrame:
        """Wide per-mode table: each metric's mean, then its NaN count, then latency/tokens/cost."""
        if self.summary.empty:
            return self.modes.set_index("mode") if not self.modes.empty else pd.DataFrame()
        means = self.summary.pivot(index="mode", columns="metric", values="mean")
        nans = self.summary.pivot(index="mode", columns="metric", values="nan")
        columns: dict[str, pd.Series] = {}
        for metric in metric_order(list(means.columns)):
            columns[metric] = means[metric]
            columns[f"{metric} NaN"] = nans[metric].fillna(0).astype(int)
        wide = pd.DataFrame(columns)
        extra = self.modes.set_index("mode")
        return extra.join(wide, how="left").reindex(self.modes["mode"])


SPLIT_LABELS = {"all": "all questions", "dev": "the dev split only (dev_split.txt: the questions tuning looked at)",
                "rest": "the rest only (the dev split left out: held-out questions)"}


def split_label(manifest: dict[str, Any]) -> str:
    """Which questions a run's tables average (its ``--split``; a run from before --split: all)."""
    split = (manifest.get("config") or {}).get("split") or "all"
    return SPLIT_LABELS.get(split, str(split))


def metric_order(names: list[str]) -> list[str]:
    from rag_lab.evaluate.metrics import all_specs

    from rag_lab.evaluate.run.scorer import COVERAGE_METRICS

    specs = [s.name for s in all_specs()]
    # the key facts' coverage right after the answer's key-fact scores: chunks, evidence, answer side by side
    at = specs.index("key_fact_precision") + 1
    known = specs[:at] + list(COVERAGE_METRICS) + specs[at:] + ["mrr@10", "ndcg@10", "turn_expected_content", "turn_pass"]
    return [n for n in known if n in names] + sorted(n for n in names if n not in known)


def _value(v: Any) -> float:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return v if math.isfinite(v) else float("nan")


def samples_frame(records: dict[str, list[dict[str, Any]]], run: str = "") -> pd.DataFrame:
    rows = []
    for mode, items in records.items():
        for r in items:
            kind = "conversation" if mode == CONVERSATIONS else "qa"
            for metric, value in (r.get("scores") or {}).items():
                rows.append((run, r.get("mode", mode), kind, r["id"], metric, _value(value)))
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)


def summary_frame(samples: pd.DataFrame) -> pd.DataFrame:
    if samples.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    grouped = samples.groupby(["mode", "metric"], sort=False)["value"]
    out = grouped.agg(mean="mean", n="count", applicable="size").reset_index()
    out["nan"] = out["applicable"] - out["n"]
    return out[SUMMARY_COLUMNS]


def _quantile(values: list[float], q: float) -> float:
    return float(pd.Series(values).quantile(q)) if values else float("nan")


def modes_frame(records: dict[str, list[dict[str, Any]]]) -> pd.DataFrame:
    from rag_lab.answer.statements import is_non_answer

    rows = []
    for mode, items in records.items():
        ok = [r for r in items if not r.get("error")]
        total = [float(r["latency"]["total"]) for r in ok if "total" in (r.get("latency") or {})]

        def mean_of(stage: str) -> float:
            values = [float(r["latency"][stage]) for r in ok if stage in (r.get("latency") or {})]
            return sum(values) / len(values) if values else float("nan")

        def tokens(key: str) -> int:
            return int(sum(int((r.get("usage") or {}).get(key, 0)) for r in ok))

        costs = [_value(r.get("cost_usd")) for r in ok]
        answered = [r for r in ok if r.get("response_type", "answer") == "answer" and "citations" in r]
        rows.append({
            "mode": mode, "samples": len(items), "errors": len(items) - len(ok),
            # questions whose source_file names no document: no document-level metrics
            "unjudgeable": sum(1 for r in items if r.get("unjudgeable")),
            "cached": sum(1 for r in ok if r.get("cached")),
            "latency_p50_s": _quantile(total, 0.5), "latency_p95_s": _quantile(total, 0.95),
            "retrieve_s": mean_of("retrieve"), "generate_s": mean_of("generate"), "score_s": mean_of("score"),
            "prompt_tokens": tokens("prompt_tokens"), "completion_tokens": tokens("completion_tokens"),
            "total_tokens": tokens("total_tokens"),
            "cost_usd": float(sum(costs)) if costs else float("nan"),
            "cites_nothing": (sum(1 for r in answered if not r["citations"]["cites"]) / len(answered)
                              if answered else float("nan")),
            # answers with no statement of their own (quotes only): they score as non-answers
            "non_answers": (sum(1 for r in answered if is_non_answer(r.get("answer") or "")) / len(answered)
                            if answered else float("nan")),
            # citations no offline check can verify (their sentence states no key fact): n/a, never precise
            "citations_unverifiable": sum(int(r["citations"].get("unverifiable", 0)) for r in answered),
            "dev_split": sum(1 for r in items if r.get("dev_split")),  # questions of the dataset's dev split
        })
    return pd.DataFrame(rows, columns=MODE_COLUMNS)


def load_run(path: str | Path) -> EvalRun:
    """Read ``path`` (a run folder): the manifest's modes, in its order (and its conversations)."""
    from rag_lab.errors import ConfigError
    from rag_lab.evaluate.store.run_folder import read_manifest, scan_samples

    path = Path(path)
    manifest_file = path / MANIFEST
    if not manifest_file.exists():
        raise ConfigError(f"{path} is not a run folder (no {MANIFEST})", "pass the --out folder of `rag-lab eval`")
    manifest = read_manifest(manifest_file, hint="re-run the evaluation into this folder (without --resume) "
                                                 "or into a new --out folder")
    config = manifest.get("config") or {}
    order = list(dict.fromkeys(config.get("modes") or []))
    if config.get("conversations"):
        order.append(CONVERSATIONS)
    modes = [m for m in order if (path / m / SAMPLES).exists()]
    records, notes = {}, []
    for mode in modes:
        scanned = scan_samples(path / mode / SAMPLES)
        # one record per sample: a failed sample retried by --resume has a later line, which wins
        records[mode] = list({r["id"]: r for r in scanned.records}.values())
        if scanned.note:
            notes.append(f"{mode}: {scanned.note}")
    samples = samples_frame(records, run=path.name)
    return EvalRun(path, manifest, records, samples, summary_frame(samples), modes_frame(records), notes)
