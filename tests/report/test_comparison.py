"""Mode-comparison frames: CIs and marks from the package's stats, evaluation samples as per-query
scores, latency percentiles, tokens per answer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rag_lab.evaluate.statistics.significance import bootstrap_ci
from rag_lab.report.comparison import (answer_cost_frame, latency_frame, mode_table, per_query_from_samples,
                                       significance_table, wide_table)


def _per_query(seed: int = 5, n: int = 60) -> dict:
    rng = np.random.default_rng(seed)
    base = rng.random(n) * 0.5
    ids = [f"q{i}" for i in range(n)]
    return {
        "bm25": {"ndcg@10": dict(zip(ids, base)), "mrr@10": dict(zip(ids, base))},
        "same": {"ndcg@10": dict(zip(ids, base.copy())), "mrr@10": dict(zip(ids, base.copy()))},
        "better": {"ndcg@10": dict(zip(ids, base + 0.2 + rng.normal(0, 0.02, n))), "mrr@10": dict(zip(ids, base))},
    }


def test_mode_table_marks_a_planted_difference_only():
    table = mode_table(_per_query(), "bm25", n_resamples=300, n_permutations=300)
    assert list(dict.fromkeys(table["mode"])) == ["bm25", "same", "better"]  # the input's order
    row = table.set_index(["mode", "metric"])
    assert bool(row.loc[("better", "ndcg@10"), "significant"]) and row.loc[("better", "ndcg@10"), "delta"] > 0.15
    assert not row.loc[("same", "ndcg@10"), "significant"] and row.loc[("same", "ndcg@10"), "p_fisher_holm"] == 1.0
    assert not row.loc[("better", "mrr@10"), "significant"]
    base = row.loc[("bm25", "ndcg@10")]
    assert np.isnan(base["delta"]) and not base["significant"]
    ci = bootstrap_ci(list(_per_query()["bm25"]["ndcg@10"].values()), n_resamples=300)
    assert (base["mean"], base["ci_low"], base["ci_high"]) == pytest.approx((ci["mean"], ci["ci_low"], ci["ci_high"]))


def test_mode_table_is_seeded_and_needs_its_baseline():
    a = mode_table(_per_query(), "bm25", n_resamples=200, n_permutations=200)
    b = mode_table(_per_query(), "bm25", n_resamples=200, n_permutations=200)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="baseline"):
        mode_table(_per_query(), "hybrid")
    single = mode_table({"bm25": _per_query()["bm25"]}, "bm25", n_resamples=100)
    assert not single["significant"].any() and single["delta"].isna().all()


def test_display_tables():
    table = mode_table(_per_query(), "bm25", n_resamples=200, n_permutations=200)
    wide = wide_table(table, ["ndcg@10"])
    assert list(wide.index) == ["bm25", "same", "better"] and list(wide.columns) == ["ndcg@10"]
    assert wide.loc["bm25", "ndcg@10"].endswith("= baseline") and "▲ sig." in wide.loc["better", "ndcg@10"]
    assert "[" in wide.loc["same", "ndcg@10"] and "sig." not in wide.loc["same", "ndcg@10"]
    tests = significance_table(table)
    assert set(tests["mode"]) == {"same", "better"} and (tests["vs"] == "bm25").all()


def test_judged_coverage_is_shown_but_never_marked():
    """judged@10 is the share of retrieved documents that carry a judgement — a coverage figure.
    A mode that retrieves far more judged documents is not "▲ sig." on it, and the coverage does
    not take a place in the Holm family of the real comparisons."""
    from rag_lab.evaluate.retrieval.ir import JUDGED
    from rag_lab.report.comparison import COVERAGE_METRICS

    assert JUDGED in COVERAGE_METRICS
    per_query = _per_query()
    ids = list(per_query["bm25"]["ndcg@10"])
    per_query["bm25"][JUDGED] = dict.fromkeys(ids, 0.3)
    per_query["same"][JUDGED] = dict.fromkeys(ids, 0.3)
    per_query["better"][JUDGED] = {q: 0.9 + 0.001 * i for i, q in enumerate(ids)}
    table = mode_table(per_query, "bm25", n_resamples=200, n_permutations=200)
    row = table.set_index(["mode", "metric"]).loc[("better", JUDGED)]
    assert row["mean"] > 0.8 and not row["significant"] and np.isnan(row["p_student_holm"])
    assert "sig." not in wide_table(table).loc["better", JUDGED]
    assert JUDGED not in set(significance_table(table)["metric"])
    without = mode_table(_per_query(), "bm25", n_resamples=200, n_permutations=200).set_index(["mode", "metric"])
    assert row.name[0] == "better" and table.set_index(["mode", "metric"]).loc[("better", "ndcg@10"), "p_student_holm"] \
        == pytest.approx(without.loc[("better", "ndcg@10"), "p_student_holm"])  # same Holm family as without it


def test_per_query_from_samples_drops_failed_scores():
    samples = pd.DataFrame([
        ("r", "bm25", "qa", "q1", "rouge_l", 0.5), ("r", "bm25", "qa", "q2", "rouge_l", float("nan")),
        ("r", "dense", "qa", "q1", "rouge_l", 0.7), ("r", "dense", "qa", "q1", "ndcg@10", 1.0),
    ], columns=["run", "mode", "kind", "sample_id", "metric", "value"])
    assert per_query_from_samples(samples) == {"bm25": {"rouge_l": {"q1": 0.5}},
                                               "dense": {"rouge_l": {"q1": 0.7}, "ndcg@10": {"q1": 1.0}}}
    assert per_query_from_samples(samples, ["ndcg@10"]) == {"dense": {"ndcg@10": {"q1": 1.0}}}


def test_latency_and_answer_cost():
    lat = latency_frame({"bm25": {f"q{i}": float(i) for i in range(1, 101)}, "dense": [5.0, float("nan")]})
    row = lat.set_index("label")
    assert row.loc["bm25", "p50_ms"] == pytest.approx(50.5) and row.loc["bm25", "p95_ms"] == pytest.approx(95.05)
    assert row.loc["dense", "n"] == 1 and row.loc["dense", "p95_ms"] == 5.0
    modes = pd.DataFrame([{"mode": "bm25", "samples": 3, "errors": 1, "latency_p50_s": 2.0, "latency_p95_s": 3.0,
                           "prompt_tokens": 300, "completion_tokens": 60, "total_tokens": 360, "cost_usd": 0.0,
                           "cites_nothing": 0.5}])
    cost = answer_cost_frame(modes).iloc[0]
    assert cost["answers"] == 2 and cost["tokens/answer"] == 180 and cost["completion_tokens/answer"] == 30
