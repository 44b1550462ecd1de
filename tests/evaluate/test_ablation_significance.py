"""Significance that can fire, and only as often as it should: paired tests Holm-corrected within
the family a table answers (one axis at the baseline's other settings), never over the whole grid."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.evaluate.ablation.grid import GridSpec
from rag_lab.evaluate.ablation.significance import comparison_for, family_summary, summarise

METRIC = "ndcg@top_k"
# The default k × prefetch × top-k grid with two weight pairs, as in `rag-lab ablate … --weights 1:1,0.001:1`.
SPEC = GridSpec(modes=("fusion",), weights=((1.0, 1.0), (0.001, 1.0)))


def _grid_scores(spec: GridSpec, n_queries: int, rng, effects: dict[str, float] | None = None,
                 noise: float = 0.1) -> dict:
    """Every configuration = a query's difficulty + independent noise (+ a planted effect)."""
    difficulty = rng.random(n_queries)
    per_query = {}
    for config in spec.configs():
        scores = difficulty + rng.normal(0.0, noise, n_queries) + (effects or {}).get(config.id, 0.0)
        per_query[config.id] = {METRIC: {f"q{i}": float(v) for i, v in enumerate(scores)}}
    return per_query


def test_families_are_one_axis_at_the_baselines_other_settings():
    spec = GridSpec(modes=("fusion", "hybrid"), fusion_k=(1, 60), prefetch=(10, 100), top_k=(5,),
                    weights=((1.0, 1.0), (0.5, 1.0)))
    by = {c.id: comparison_for(c, spec) for c in spec.configs()}
    assert by["fusion|k=60|p=100|w=1:1|top=5"] is None  # the reference
    assert by["fusion|k=1|p=100|w=1:1|top=5"] == ("k", "fusion|k=60|p=100|w=1:1|top=5")
    assert by["fusion|k=60|p=10|w=1:1|top=5"] == ("prefetch", "fusion|k=60|p=100|w=1:1|top=5")
    assert by["hybrid|k=60|p=100|w=0.5:1|top=5"] == ("weights", "hybrid|k=60|p=100|w=1:1|top=5")
    assert by["hybrid|k=60|p=100|w=1:1|top=5"] == ("mode", "fusion|k=60|p=100|w=1:1|top=5")
    assert by["fusion|k=1|p=10|w=1:1|top=5"] == ("interactions", "fusion|k=60|p=100|w=1:1|top=5")


def test_power_one_truly_better_configuration_is_flagged():
    """+0.3 on every one of 300 queries, and a modest +0.05 under noise: both flagged, each within
    its family (the whole-grid Holm family of 1,000-permutation Fisher p-values flagged neither)."""
    rng = np.random.default_rng(0)
    strong, modest = "fusion|k=60|p=100|w=0.001:1|top=10", "fusion|k=60|p=25|w=1:1|top=5"
    per_query = _grid_scores(SPEC, 300, rng, {strong: 0.3, modest: 0.05})
    table = summarise(per_query, SPEC.configs(), SPEC).set_index("config")
    row = table.loc[strong]
    assert bool(row["significant"]) and row["delta"] == pytest.approx(0.3, abs=0.03)
    assert row["family"] == "weights | fusion | top-10 | ndcg@top_k" and row["family_size"] == 1
    assert row["p_student_holm"] == row["p_student"] < 1e-10  # a family of one: Holm changes nothing
    row = table.loc[modest]
    assert bool(row["significant"]) and row["family"] == "prefetch | fusion | top-5 | ndcg@top_k"
    assert row["family_size"] == 3 and row["p_student_holm"] == pytest.approx(min(1.0, 3 * row["p_student"]))
    assert row["p_wilcoxon_holm"] < 0.05  # the rank test agrees
    assert table["significant"].sum() <= 4  # and nothing much else
    lines = family_summary(table.reset_index())
    assert any(line.startswith("k: 4 families of 6 comparisons") for line in lines), lines


def test_size_a_null_grid_flags_at_most_alpha_of_the_time():
    """Equal configurations + noise: the share of seeds in which a family flags anything (its
    family-wise error) stays at most α — and is not zero, which a test that can never fire would
    give."""
    spec = GridSpec(modes=("fusion",), fusion_k=(1, 10, 60), prefetch=(25, 100), top_k=(10,))
    seeds = 300
    flagged = {axis: 0 for axis in ("k", "prefetch", "interactions")}
    for seed in range(seeds):
        table = summarise(_grid_scores(spec, 60, np.random.default_rng(seed)), spec.configs(), spec)
        for axis, group in table[table["family_axis"].notna()].groupby("family_axis"):
            flagged[axis] += bool(group["significant"].any())
    rates = {axis: n / seeds for axis, n in flagged.items()}
    overall = sum(flagged.values()) / (seeds * len(flagged))
    tolerance = 2.5 * np.sqrt(0.05 * 0.95 / seeds)  # binomial sampling error of a rate of α
    assert all(rate <= 0.05 + tolerance for rate in rates.values()), rates
    assert 0.01 < overall <= 0.05 + tolerance / np.sqrt(len(flagged)), (overall, rates)


def test_baseline_rows_and_families_in_the_table():
    rng = np.random.default_rng(1)
    spec = GridSpec(modes=("fusion", "hybrid"), fusion_k=(1, 60), prefetch=(10, 100), top_k=(3, 5))
    table = summarise(_grid_scores(spec, 40, rng), spec.configs(), spec)
    reference = table[table["config"] == table["baseline"]]
    assert len(reference) == 2 and reference["family"].isna().all() and not reference["significant"].any()
    tested = table[table["config"] != table["baseline"]]
    assert tested["family"].notna().all() and tested["p_student"].between(0, 1).all()
    assert set(tested["family_axis"]) == {"k", "prefetch", "mode", "interactions"}
    sizes = tested.groupby("family")["family_size"].agg(["first", "size"])
    assert (sizes["first"] == sizes["size"]).all()  # family_size counts the family's comparisons


def test_the_contextual_axis_drops_nan_pairs_and_corrects_like_the_grid():
    """Each variant against the first at the baseline configurations, through the grid's own pairing
    (a question one system could not score is left out of the pair, not turned into a NaN p-value)."""
    import pandas as pd

    from rag_lab.evaluate.ablation.contextual import contextual_axis
    from rag_lab.evaluate.ablation.runner import AblationResult

    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(100,), top_k=(5,))
    config = spec.baseline("fusion", 5).id
    rng = np.random.default_rng(3)
    base = rng.random(40)
    variants = {"none": base, "annotations": base + 0.2 + rng.normal(0, 0.05, 40), "llm": base + rng.normal(0, 0.05, 40)}
    variants["llm"][7] = np.nan  # e.g. a metric undefined for one question
    runs = {name: AblationResult(None, {}, None, pd.DataFrame(
        {"config": config, "qid": [f"q{i}" for i in range(40)], "metric": METRIC, "score": scores}))
        for name, scores in variants.items()}
    axis = contextual_axis(runs, spec).set_index("contextual")
    assert pd.isna(axis.loc["none", "family"]) and np.isnan(axis.loc["none", "p_student"])
    for name in ("annotations", "llm"):
        row = axis.loc[name]
        assert row["family"] == f"contextual | {config} | {METRIC}" and row["family_size"] == 2
        assert 0 <= row["p_student"] <= row["p_student_holm"] <= 1 and 0 <= row["p_wilcoxon_holm"] <= 1
    assert bool(axis.loc["annotations", "significant"]) and not axis.loc["llm", "significant"]
    kept = ~np.isnan(variants["llm"])
    assert axis.loc["llm", "delta"] == pytest.approx(float((variants["llm"][kept] - base[kept]).mean()))
