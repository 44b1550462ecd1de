"""No interval is drawn below a sample size that can carry one: at n = 2 a bootstrap resamples two
numbers and its "95 % interval" is their range."""

from __future__ import annotations

import math

from rag_lab.report.comparison import MIN_INTERVAL_N, mode_table
from rag_lab.report.figures import mode_metric_bars
from rag_lab.report.tables import fmt_ci


def _per_query(n: int) -> dict:
    return {mode: {"key_fact_recall": {f"q{i}": (i % 3) / 2 + shift for i in range(n)}}
            for mode, shift in (("bm25", 0.0), ("hybrid", 0.1))}


def test_no_interval_below_the_minimum_sample_size_and_one_above():
    small = mode_table(_per_query(2), "bm25", n_resamples=100, n_permutations=100)
    assert small["ci_low"].isna().all() and small["ci_high"].isna().all() and (small["n"] == 2).all()
    assert fmt_ci(small["mean"][0], small["ci_low"][0], small["ci_high"][0]) == f"{small['mean'][0]:.3f}"  # mean only
    large = mode_table(_per_query(MIN_INTERVAL_N), "bm25", n_resamples=100, n_permutations=100)
    assert not large["ci_low"].isna().any() and (large["ci_low"] <= large["mean"]).all()
    figure = mode_metric_bars(small)  # the bars draw without error bars
    assert figure is not None and not any(math.isnan(v) for v in small["mean"])
