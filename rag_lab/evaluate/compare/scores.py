"""Per-question scores of one run, mode and metric, as compare pairs them.

Every value compare tests comes through :func:`metric_scores`. For a judged metric whose judge a
person's labels calibrate (``rag-lab label RUN``), :func:`calibrated_scores` gives the per-question
corrected values instead (prediction-powered inference: λ × the judge's score plus, on the labelled
questions, the correction weighted by all / labelled — their mean estimates the labels' mean, so
pairing and the paired test stay as they are; see :mod:`rag_lab.evaluate.calibration`).
"""

from __future__ import annotations

import math
from functools import cache

from rag_lab.evaluate.store.frames import EvalRun

HEADLINE_METRICS = ("ndcg@10", "key_fact_recall")  # the default metric of flips and verdicts, first present


@cache
def judged_metric_names() -> frozenset[str]:
    from rag_lab.evaluate.metrics import all_specs

    return frozenset(s.name for s in all_specs() if s.judged)


def is_judged(metric: str) -> bool:
    return metric in judged_metric_names()


def scored_metrics(run: EvalRun, modes) -> list[str]:
    """The metrics the run scored in any of ``modes``, in the lab's metric order."""
    from rag_lab.evaluate.store.frames import metric_order

    frame = run.samples[run.samples["mode"].isin(list(modes))]
    return metric_order(list(dict.fromkeys(frame["metric"])))


def headline(metrics: list[str]) -> str | None:
    return next((m for m in HEADLINE_METRICS if m in metrics), metrics[0] if metrics else None)


def metric_scores(run: EvalRun, mode: str, metric: str) -> dict[str, float]:
    """``{question id: score}`` (NaN where the metric applied but failed; absent where it does not apply)."""
    scores: dict[str, float] = {}
    for record in run.records.get(mode, []):
        value = (record.get("scores") or {}).get(metric, "absent")
        if value == "absent":
            continue
        scores[str(record["id"])] = float(value) if isinstance(value, (int, float)) and math.isfinite(value) else math.nan
    return scores


def calibrated_scores(run: EvalRun, mode: str, metric: str) -> dict[str, float] | None:
    """``{question id: corrected value}`` of a judged metric in ``mode`` when the run holds a person's
    labels for it, else None (the judge alone)."""
    if not is_judged(metric):
        return None
    entry = _calibrations(run).get(metric)
    return entry.corrected.get(mode) if entry is not None else None


def _calibrations(run: EvalRun) -> dict:
    cached = getattr(run, "_calibrations", None)
    if cached is None:
        from rag_lab.evaluate.calibration import calibrated_judged

        cached = calibrated_judged(run)
        object.__setattr__(run, "_calibrations", cached)
    return cached
