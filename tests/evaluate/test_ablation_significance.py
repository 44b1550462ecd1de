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
    """+0.3 on every one of 300 queries at the headline cut-off (top-10) is marked; a modest +0.05
    at top-5 lies outside the marked set: its per-family Holm p (exploratory) is below α, but it is
    never called significant."""
    rng = np.random.default_rng(0)
    strong, modest = "fusion|k=60|p=100|w=0.001:1|top=10", "fusion|k=60|p=25|w=1:1|top=5"
    per_query = _grid_scores(SPEC, 300, rng, {strong: 0.3, modest: 0.05})
    table = summarise(per_query, SPEC.configs(), SPEC).set_index("config")
    row = table.loc[strong]
    assert bool(row["significant"]) and bool(row["marked_set"]) and row["delta"] == pytest.approx(0.3, abs=0.03)
    assert row["family"] == "weights | fusion | top-10 | ndcg@top_k" and row["family_size"] == 1
    assert row["p_student_holm"] == row["p_student"] < 1e-10  # a family of one: Holm changes nothing
    # the marked set: 6 k + 3 prefetch + 1 weights comparisons at top-10, Holm over the ten together
    assert int(table["marked_set"].sum()) == 10 and row["p_adjusted"] <= 10 * row["p_decision"]
    row = table.loc[modest]
    assert row["family"] == "prefetch | fusion | top-5 | ndcg@top_k" and row["family_size"] == 3
    assert row["p_student_holm"] == pytest.approx(min(1.0, 3 * row["p_student"])) and row["p_student_holm"] < 0.05
    assert not row["marked_set"] and not row["significant"] and np.isnan(row["p_adjusted"])
    assert row["p_wilcoxon_holm"] < 0.05  # the rank test agrees
    assert table["significant"].sum() <= 2  # and nothing much else
    assert set(table.loc[table["significant"], "top_k"]) <= {10}
    lines = family_summary(table.reset_index())
    assert any(line.startswith("k: 4 families of 6 comparisons") for line in lines), lines


def test_size_nothing_is_marked_in_more_than_alpha_of_null_grids():
    """Equal configurations + noise, two cut-offs and two metrics: the share of seeds in which ANY
    row of the whole table is significant (the family-wise error over everything that can be
    printed) stays at most α — and is not zero, which a test that can never fire would give. The
    old per-family rule (Holm within each of the 12 families) flags far more often."""
    spec = GridSpec(modes=("fusion",), fusion_k=(1, 5, 20, 60, 100), prefetch=(25, 100), top_k=(5, 10))
    seeds = 200
    any_marked = old_any = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        per_query = _grid_scores(spec, 30, rng)
        for config, scores in _grid_scores(spec, 30, rng).items():
            per_query[config]["recall@top_k"] = scores[METRIC]
        table = summarise(per_query, spec.configs(), spec, ci=False)
        assert int(table["marked_set"].sum()) == 5  # 4 k + 1 prefetch, nDCG at top-10
        any_marked += bool(table["significant"].any())
        old_any += bool((table["p_student_holm"] < 0.05).any())
    tolerance = 2.5 * np.sqrt(0.05 * 0.95 / seeds)  # binomial sampling error of a rate of α
    assert 0.01 < any_marked / seeds <= 0.05 + tolerance, any_marked / seeds
    assert old_any / seeds > 0.2  # 12 families of α each


def test_power_of_the_marked_set_on_a_small_grid():
    """One k value better by 0.5 noise SD on 120 questions (paired-difference SD √2·noise):
    marked in most seeds (analytic power ≈ 0.9 at Holm over 5), and nothing else is."""
    spec = GridSpec(modes=("fusion",), fusion_k=(1, 5, 20, 60, 100), prefetch=(25, 100), top_k=(5, 10))
    better = "fusion|k=20|p=100|w=1:1|top=10"
    seeds, hits, others = 60, 0, 0
    for seed in range(seeds):
        table = summarise(_grid_scores(spec, 120, np.random.default_rng(seed), {better: 0.05}), spec.configs(),
                          spec, ci=False).set_index("config")
        hits += bool(table.loc[better, "significant"])
        others += int(table["significant"].sum()) - bool(table.loc[better, "significant"])
    assert hits / seeds >= 0.75 and others <= 0.1 * seeds


def test_sparse_or_tiny_differences_are_decided_by_the_exact_sign_flip():
    """A 4-question folder where every question moves by the same amount: exact p = 2/16 = 0.125
    (never 0), the row says so and nothing is marked."""
    spec = GridSpec(modes=("fusion",), fusion_k=(1, 60), prefetch=(100,), top_k=(10,))
    base = np.array([0.2, 0.5, 0.7, 0.9])
    per_query = {spec.baseline("fusion", 10).id: {METRIC: {f"q{i}": v for i, v in enumerate(base)}},
                 "fusion|k=1|p=100|w=1:1|top=10": {METRIC: {f"q{i}": v + 0.1 for i, v in enumerate(base)}}}
    row = summarise(per_query, spec.configs(), spec).set_index("config").loc["fusion|k=1|p=100|w=1:1|top=10"]
    assert row["decided_by"] == "sign-flip exact"
    assert row["p_student"] == pytest.approx(0.125) and row["p_adjusted"] == pytest.approx(0.125)
    assert not row["significant"]


def _holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values, written out here (not the code under test's)."""
    ordered = sorted(p_values, key=p_values.get)
    adjusted, running = {}, 0.0
    for i, name in enumerate(ordered):
        running = max(running, min(1.0, (len(ordered) - i) * p_values[name]))
        adjusted[name] = running
    return adjusted


def _with_t(base: np.ndarray, t_value: float, rng) -> np.ndarray:
    """``base`` + differences whose paired t statistic is exactly ``t_value`` (standardised noise,
    shifted so mean / (sd / √n) = t)."""
    z = rng.normal(size=base.size)
    z = (z - z.mean()) / z.std(ddof=1)
    return base + z + t_value / np.sqrt(base.size)


@pytest.mark.parametrize("factor, flagged", [(1.1, True), (0.9, False)])
def test_power_at_the_detection_threshold_matches_the_analytic_paired_t(factor, flagged):
    """An effect just above (×1.1) or just below (×0.9) the two-sided 5 % critical t of a family of
    one: the p-value is the analytic paired t's (scipy's ttest_rel on the same arrays, and the t
    distribution's tail directly), and only the stronger effect is flagged."""
    from scipy import stats

    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(100,), top_k=(10,),
                    weights=((1.0, 1.0), (0.5, 1.0)))
    n = 40
    rng = np.random.default_rng(11)
    base = rng.random(n)
    t_value = factor * stats.t.ppf(0.975, n - 1)
    moved = _with_t(base, t_value, rng)
    reference, tested = spec.baseline("fusion", 10).id, "fusion|k=60|p=100|w=0.5:1|top=10"
    per_query = {reference: {METRIC: {f"q{i}": float(v) for i, v in enumerate(base)}},
                 tested: {METRIC: {f"q{i}": float(v) for i, v in enumerate(moved)}}}
    row = summarise(per_query, spec.configs(), spec).set_index("config").loc[tested]
    expected = stats.ttest_rel(moved, base).pvalue
    assert expected == pytest.approx(2 * stats.t.sf(t_value, n - 1), rel=1e-9)
    assert bool(expected < 0.05) is flagged and 0.02 < expected < 0.08  # near the threshold, on either side
    assert row["family_size"] == 1 and row["p_student"] == pytest.approx(expected, rel=1e-6)
    assert row["p_student_holm"] == row["p_student"] and bool(row["significant"]) is flagged


def test_holm_within_a_k_family_matches_holm_over_scipys_paired_t():
    """Four k values against the default k, one with an effect near the corrected threshold: each
    row's raw p is scipy's paired t and its adjusted p Holm's over exactly those four."""
    from scipy import stats

    spec = GridSpec(modes=("fusion",), fusion_k=(1, 5, 20, 60, 100), prefetch=(100,), top_k=(10,))
    n = 50
    rng = np.random.default_rng(5)
    base = rng.random(n)
    reference = spec.baseline("fusion", 10).id
    tested = [c.id for c in spec.configs() if c.id != reference]
    # k=1 just clears Holm's first step (p × 4 < 0.05); the others are noise
    arrays = {reference: base, tested[0]: _with_t(base, 1.1 * stats.t.ppf(1 - 0.05 / 8, n - 1), rng)}
    arrays.update({c: base + rng.normal(0.0, 1.0, n) for c in tested[1:]})
    per_query = {c: {METRIC: {f"q{i}": float(v) for i, v in enumerate(a)}} for c, a in arrays.items()}
    table = summarise(per_query, spec.configs(), spec).set_index("config")
    raw = {c: stats.ttest_rel(arrays[c], base).pvalue for c in tested}
    adjusted = _holm(raw)
    assert set(table.loc[tested, "family"]) == {"k | fusion | top-10 | ndcg@top_k"}
    for c in tested:
        assert table.loc[c, "family_size"] == 4
        assert table.loc[c, "p_student"] == pytest.approx(raw[c], rel=1e-6)
        assert table.loc[c, "p_student_holm"] == pytest.approx(adjusted[c], rel=1e-6)
        assert bool(table.loc[c, "significant"]) == (adjusted[c] < 0.05)
    assert 0.02 < adjusted[tested[0]] < 0.05 and bool(table.loc[tested[0], "significant"])


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


def _summary_of(table):
    from pathlib import Path

    from rag_lab.cli.ablate import render_summary
    from rag_lab.evaluate.ablation.runner import AblationResult

    manifest = {"dataset": "d", "n_configs": len(SPEC.configs()), "n_queries": 240, "split": "all",
                "timing": {"legs_s": 0.0, "grid_s": 0.0, "metrics_s": 0.0, "stats_s": 0.0},
                "spot_check": {"equal": True, "mode": "fusion", "prefetch_values": [100]}}
    return render_summary(AblationResult(Path("runs/x"), manifest, table, None))


def test_a_gain_at_another_top_k_is_shown_as_not_controlled_never_as_no_difference():
    """A +0.114 gain at top-5 (exploratory p ≈ 1e-12) is outside the marked set (top-10): the CLI
    says which top-k was tested and lists the gain under "not controlled — confirm with `tune`"."""
    from rag_lab.evaluate.ablation.significance import uncontrolled_rows

    rng = np.random.default_rng(4)
    gain = "fusion|k=60|p=25|w=1:1|top=5"
    table = summarise(_grid_scores(SPEC, 240, rng, {gain: 0.114}), SPEC.configs(), SPEC)
    listed = uncontrolled_rows(table)
    assert gain in set(listed["config"]) and listed.iloc[0]["config"] == gain
    assert listed.iloc[0]["p_student_holm"] < 1e-10 and not listed["significant"].any()
    text = _summary_of(table)
    assert "ndcg@top_k at top-10 only" in text
    assert "no configuration differs significantly" not in text
    verdict = ("no configuration of the marked set (ndcg@top_k at top-10, one setting moved)" if not
               table["significant"].any() else "significant on ndcg@top_k at top-10")
    assert verdict in text
    assert "not controlled — confirm with `tune`" in text
    assert f"{listed.iloc[0]['delta']:+.3f}" in text.split("not controlled — confirm")[1]


def test_one_contextual_command_is_one_family():
    """Two variant grids and the contextual axis: Holm runs over all their marked rows together, so
    a p that passes inside one grid alone can fail in the command's family."""
    import pandas as pd

    from rag_lab.evaluate.ablation.contextual import command_family
    from rag_lab.evaluate.statistics.significance import holm

    rng = np.random.default_rng(8)
    grids = {name: summarise(_grid_scores(SPEC, 120, rng), SPEC.configs(), SPEC) for name in ("none", "annotations")}
    alone = {name: table["p_adjusted"].copy() for name, table in grids.items()}
    axis = pd.DataFrame({"marked_set": [True], "p_decision": [0.001], "p_adjusted": [0.001], "significant": [True]})
    family = command_family(grids, axis)
    assert family["size"] == 10 + 10 + 1 and family["members"] == {"none": 10, "annotations": 10, "contextual axis": 1}
    pooled = [*grids["none"].loc[grids["none"]["marked_set"], "p_decision"],
              *grids["annotations"].loc[grids["annotations"]["marked_set"], "p_decision"], 0.001]
    expected = holm(pooled)
    got = [*grids["none"].loc[grids["none"]["marked_set"], "p_adjusted"],
           *grids["annotations"].loc[grids["annotations"]["marked_set"], "p_adjusted"], axis.loc[0, "p_adjusted"]]
    assert got == pytest.approx(expected)
    marked = grids["none"]["marked_set"]
    assert (grids["none"].loc[marked, "p_adjusted"] >= alone["none"][marked] - 1e-12).all()
    assert "over all 21 comparisons that can be marked" in family["text"] and "≤ 0.05" in family["text"]
