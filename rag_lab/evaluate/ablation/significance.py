"""Which grid differences are real: paired tests corrected within the question a table answers.

Each configuration is compared with the configuration that differs from it in the fewest settings
(same mode and top-k: metrics at different cut-offs are not comparable), and each comparison
belongs to one *family* — the comparisons that answer one question for one mode, top-k and metric:

- ``k``: "does RRF k matter?" — every other k against the default k, at the default prefetch and
  weights;
- ``prefetch``: "does the prefetch depth matter?" — every other prefetch, at the default k and weights;
- ``weights``: "do the leg weights matter?" — every other weight pair, at the default k and prefetch;
- ``max_per_doc``: "does a cap of chunks per document matter?" — every other cap against no cap,
  at the default k, prefetch and weights;
- ``mode``: "does the engine matter?" — each other mode's baseline against the first mode's;
- ``interactions``: configurations that move two or more settings at once, against their mode's
  baseline (exploratory: a large family, so only large effects survive it).

Which rows may be called *significant* (▲/▼ in the report, "significant" in the CLI) is fixed
before any p-value is seen, and one correction runs over all of them together (the lab's comparison
policy, :mod:`rag_lab.evaluate.statistics.policy`):

- the *marked set* = the comparisons of the headline metric (nDCG at the top-k, ``ndcg@top_k``) at
  the deepest cut-off of the grid (its largest top-k) that move ONE setting (the k, prefetch,
  weights, max_per_doc and mode families); the policy's decision test (``p_decision``,
  ``decided_by``) and Holm over that whole set (``p_adjusted``) → family-wise error ≤ α over every
  row that is ever marked, whatever the grid's size or number of metrics (``ablate --contextual``
  pools every variant's marked set with the contextual axis into one family:
  :func:`~rag_lab.evaluate.statistics.policy.correct_jointly`);
- every other row (other metrics, other cut-offs, interactions) keeps its per-family Holm p-values
  (``p_student_holm``, ``p_wilcoxon_holm``) as an *exploratory* view and is never marked; rows at
  another top-k with an exploratory p below α are listed as "not controlled — confirm with
  ``tune``" (:func:`uncontrolled_rows`).

A grid-wide correction over all ~900 rows of a default run would hold the same error rate, but one
truly better configuration would then need p < 0.05/900; the marked set keeps the power of the old
per-family view at the cut-off users read (``benchmarks/grid_significance.py`` measures both).
The exploratory p-values are the two-sided paired Student's t (analytic; the exact sign-flip p
where t cannot speak: at most 16 non-zero differences or a constant difference) with Wilcoxon
signed-rank beside it; only the marked set is tested with the policy's decision test.
"""

from __future__ import annotations

from operator import itemgetter

import numpy as np

from rag_lab.evaluate.ablation.grid import Config, GridSpec
from rag_lab.evaluate.statistics import policy
from rag_lab.evaluate.statistics.significance import (DEFAULT_ALPHA, bootstrap_ci, bootstrap_matrix, holm_within,
                                                      paired_test, paired_tests_many)
from rag_lab.retrieve.configuration import compared_axes

# The families besides one per compared axis of the lever table (:func:`family_questions`).
OTHER_FAMILIES = {
    "mode": "does the fused mode matter? each mode's baseline against the first mode's",
    "interactions": "configurations moving two or more settings at once, against their mode's baseline",
}
DECISION_TEST = "student"  # the exploratory view's test; the marked set's is the policy's
CHECK_TEST = "wilcoxon"
HEADLINE_METRICS = ("ndcg@top_k", "ndcg")  # the metric the marked set is drawn from (first present)
ERROR_RATE = policy.ERROR_RATE


def family_questions() -> dict[str, str]:
    """Family axis → the question its comparisons answer: one per compared axis, then mode and interactions."""
    return {**{a.name: a.question for a in compared_axes()}, **OTHER_FAMILIES}


def one_setting_axes() -> tuple[str, ...]:
    """The families whose comparisons move one setting (the marked set is drawn from them)."""
    return (*(a.name for a in compared_axes()), "mode")


def _moved(config: Config, base: Config) -> list[str]:
    return [a.name for a in compared_axes() if a.value_of(config) != a.value_of(base)]


def comparison_for(config: Config, spec: GridSpec) -> tuple[str, str] | None:
    """(family axis, baseline config id) of a configuration; None for the reference itself (the
    first mode's baseline at this top-k), which is compared with nothing."""
    own = spec.baseline(config.mode, config.top_k)
    if config == own:
        if config.mode == spec.modes[0]:
            return None
        return "mode", spec.baseline(spec.modes[0], config.top_k).id
    moved = _moved(config, own)
    return (moved[0] if len(moved) == 1 else "interactions"), own.id


def family_name(axis: str, mode: str, top_k: int, metric: str) -> str:
    """A family's name as results.csv and the report show it, e.g. ``k | fusion | top-10 | ndcg@top_k``."""
    return f"mode | top-{top_k} | {metric}" if axis == "mode" else f"{axis} | {mode} | top-{top_k} | {metric}"


def _scores_in_order(scores: dict, queries: list[str]) -> list[float]:
    """``scores`` at ``queries`` (NaN where missing); one C-level lookup when all are there."""
    try:
        return list(itemgetter(*queries)(scores)) if len(queries) > 1 else [scores[queries[0]]]
    except KeyError:
        return [scores.get(q, np.nan) for q in queries]


def _score_rows(per_query: dict, configs: list[Config], seed: int, ci: bool = True) -> tuple[list[dict], dict]:
    """One row per configuration × metric: mean and bootstrap CI (NaN-free rows in one matrix pass);
    and per metric (questions, config id → its scores over them, NaN where missing), for the tests."""
    rows, matrices = [], {}
    metrics = sorted({m for per_metric in per_query.values() for m in per_metric})
    for metric in metrics:
        chosen = [c for c in configs if per_query[c.id].get(metric)]
        if not chosen:
            continue
        queries = sorted(per_query[chosen[0].id][metric])
        scores = [per_query[c.id][metric] for c in chosen]
        matrix = np.array([_scores_in_order(s, queries) for s in scores], dtype=float)
        matrices[metric] = (queries, {c.id: matrix[i] for i, c in enumerate(chosen)
                                      if len(per_query[c.id][metric]) == len(queries)})
        complete = ~np.isnan(matrix).any(axis=1)
        mean, low, high = (np.full(len(chosen), np.nan) for _ in range(3))
        if complete.any() and ci:
            mean[complete], low[complete], high[complete] = bootstrap_matrix(matrix[complete], seed=seed)
        elif complete.any():
            mean[complete] = matrix[complete].mean(axis=1)
        for i in np.flatnonzero(~complete):
            row_ci = bootstrap_ci(matrix[i], seed=seed)
            mean[i], low[i], high[i] = row_ci["mean"], row_ci["ci_low"], row_ci["ci_high"]
        for i, config in enumerate(chosen):
            rows.append({**config.to_dict(), "metric": metric, "mean": mean[i], "ci_low": low[i],
                         "ci_high": high[i], "n": int((~np.isnan(matrix[i])).sum()),
                         "n_nan": int(np.isnan(matrix[i]).sum())})
    return rows, matrices


def pair_arrays(per_query: dict, config_id: str, baseline_id: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(baseline scores, config scores) on the questions both scored, NaN pairs dropped."""
    scores, base = per_query[config_id].get(metric, {}), per_query[baseline_id].get(metric, {})
    queries = sorted(set(scores) & set(base))
    a = np.array([base[q] for q in queries], dtype=float)
    b = np.array([scores[q] for q in queries], dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def paired_comparison(per_query: dict, config_id: str, baseline_id: str, metric: str, memo: dict) -> dict:
    """Δ (config − baseline), both tests' p-values and ``decided_by`` on the questions both scored
    (NaN pairs dropped). ``per_query``: system → metric → question → score; ``memo`` is shared."""
    a, b = pair_arrays(per_query, config_id, baseline_id, metric)
    key = (a.tobytes(), b.tobytes())
    if key not in memo:  # grids repeat the same score vectors: test each pair once
        p_t, decided = paired_test(a, b, DECISION_TEST)
        memo[key] = {f"p_{DECISION_TEST}": p_t, f"p_{CHECK_TEST}": paired_test(a, b, CHECK_TEST)[0],
                     "decided_by": decided}
    return {"delta": float((b - a).mean()) if a.size else float("nan"), **memo[key]}


def _compare_all(per_query: dict, pairs: list[tuple[str, str, str]], matrices: dict) -> list[dict]:
    """:func:`paired_comparison` for many (config, baseline, metric) at once: pairs whose scores
    are complete over the same questions go through :func:`paired_tests_many` per metric (one
    scipy call); the rest one by one."""
    out: list[dict | None] = [None] * len(pairs)
    memo: dict = {}
    by_metric: dict[str, list[int]] = {}
    for i, (config, baseline, metric) in enumerate(pairs):
        by_metric.setdefault(metric, []).append(i)
    for metric, indices in by_metric.items():
        queries, rows = matrices.get(metric, ([], {}))
        fast = [i for i in indices if all(c in rows and not np.isnan(rows[c]).any() for c in pairs[i][:2])]
        if fast and queries:
            a = np.array([rows[pairs[i][1]] for i in fast])
            b = np.array([rows[pairs[i][0]] for i in fast])
            p_t, p_w, decided = paired_tests_many(a, b)
            delta = (b - a).mean(axis=1)
            for j, i in enumerate(fast):
                out[i] = {"delta": float(delta[j]), f"p_{DECISION_TEST}": float(p_t[j]),
                          f"p_{CHECK_TEST}": float(p_w[j]), "decided_by": decided[j]}
        for i in indices:
            if out[i] is None:
                out[i] = paired_comparison(per_query, *pairs[i], memo)
    return out  # type: ignore[return-value]


def headline_metric(metrics) -> str | None:
    """The metric the marked set is drawn from: nDCG at the top-k when the grid has it."""
    present = list(dict.fromkeys(metrics))
    return next((m for m in HEADLINE_METRICS if m in present), present[0] if present else None)


def summarise(per_query: dict, configs: list[Config], spec: GridSpec, seed: int = 42,
              alpha: float = DEFAULT_ALPHA, ci: bool = True) -> "pandas.DataFrame":  # noqa: F821
    """Tidy table: one row per configuration × metric with mean, bootstrap 95 % CI (``ci=False``:
    means only, for simulations), its baseline, Δ, both tests' p-values raw and Holm-adjusted within
    the row's family (exploratory), ``decided_by``, ``marked_set``, ``p_adjusted`` (Holm over the
    marked set) and ``significant`` (see the module doc)."""
    import pandas as pd

    rows, matrices = _score_rows(per_query, configs, seed, ci)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    by_id = {c.id: c for c in configs}
    extra: list[dict] = []
    pairs, tested = [], []
    for position, row in enumerate(table.itertuples(index=False)):
        config = by_id[row.config]
        found = comparison_for(config, spec)
        if found is None or found[1] not in per_query:
            extra.append({"baseline": config.id if found is None else found[1], "family_axis": None,
                          "family": None, "delta": np.nan, "p_student": np.nan, "p_wilcoxon": np.nan,
                          "decided_by": None})
            continue
        axis, baseline = found
        extra.append({"baseline": baseline, "family_axis": axis,
                      "family": family_name(axis, config.mode, config.top_k, row.metric)})
        pairs.append((config.id, baseline, row.metric))
        tested.append(position)
    for position, result in zip(tested, _compare_all(per_query, pairs, matrices)):
        extra[position].update(result)
    table = pd.concat([table, pd.DataFrame(extra, index=table.index)], axis=1)
    table = correct_within_families(table, alpha)
    return correct_over_marked_set(table, spec, per_query, alpha, seed)


def correct_within_families(table: "pandas.DataFrame", alpha: float = DEFAULT_ALPHA) -> "pandas.DataFrame":  # noqa: F821
    """Adds ``family_size``, both tests' Holm-adjusted p-values (within each ``family``; rows
    without one stay NaN) and ``significant`` (the decision test's adjusted p < ``alpha``)."""
    table["family_size"] = table.groupby("family")["family"].transform("size")
    for test in (DECISION_TEST, CHECK_TEST):
        table[f"p_{test}_holm"] = holm_within(table, "family", f"p_{test}")
    table["significant"] = (table[f"p_{DECISION_TEST}_holm"] < alpha).fillna(False).astype(bool)
    return table


def correct_over_marked_set(table: "pandas.DataFrame", spec: GridSpec, per_query: dict,  # noqa: F821
                            alpha: float = DEFAULT_ALPHA, seed: int = 42) -> "pandas.DataFrame":  # noqa: F821
    """``marked_set`` (headline metric, largest top-k, one setting moved), its ``p_decision`` (the
    policy's test), ``p_adjusted`` (Holm over the whole marked set; NaN elsewhere) and
    ``significant`` = marked set and ``p_adjusted`` < α. Every other row's per-family Holm p stays
    as an exploratory column and is never significant."""
    metric = headline_metric(table["metric"])
    marked = ((table["metric"] == metric) & (table["top_k"] == max(spec.top_k))
              & table["family_axis"].isin(one_setting_axes()) & table[f"p_{DECISION_TEST}"].notna())
    return correct_over_rows(table, marked, lambda row: pair_arrays(
        per_query, table.at[row, "config"], table.at[row, "baseline"], table.at[row, "metric"]), alpha, seed)


def correct_over_rows(table: "pandas.DataFrame", marked, scores_of,  # noqa: F821
                      alpha: float = DEFAULT_ALPHA, seed: int = 42) -> "pandas.DataFrame":  # noqa: F821
    """``marked_set`` = ``marked`` (a boolean Series); for those rows ``p_decision`` and
    ``decided_by`` from the policy's decision test on ``scores_of(row label)`` → (baseline scores,
    scores) on the questions both scored, ``p_adjusted`` = Holm over them together, ``significant``
    = marked and ``p_adjusted`` < α; nothing else."""
    table["marked_set"] = marked.astype(bool)
    table["p_decision"] = np.nan
    rows = table.index[table["marked_set"]]
    by_length: dict[int, list] = {}
    pairs = {}
    for row in rows:
        pairs[row] = scores_of(row)
        by_length.setdefault(pairs[row][0].size, []).append(row)
    for length, group in by_length.items():  # one vectorised call per question count
        p, decided = policy.decide(np.array([pairs[r][0] for r in group]).reshape(len(group), length),
                                   np.array([pairs[r][1] for r in group]).reshape(len(group), length), seed)
        table.loc[group, "p_decision"] = p
        table.loc[group, "decided_by"] = decided
    policy.correct_jointly([table], alpha)
    return table


def tested_cut_off(results) -> str:
    """What the marked set tests, e.g. ``ndcg@top_k at top-10``."""
    marked = results[results["marked_set"]] if "marked_set" in getattr(results, "columns", ()) else results.iloc[:0]
    if not len(marked):
        return "the headline metric at the largest top-k"
    return f"{marked['metric'].iloc[0]} at top-{int(marked['top_k'].iloc[0])}"


def marked_set_text(results, alpha: float = DEFAULT_ALPHA) -> str:
    """What the marks control, for the CLI, the report and the manifest."""
    size = int(results["marked_set"].sum()) if "marked_set" in getattr(results, "columns", ()) else 0
    moved = ", ".join([a.short for a in compared_axes()] + ["mode"])
    return (policy.family_text(size, f"{tested_cut_off(results)} only, one setting moved: {moved}", alpha)
            + "; every other row (other metrics, other top-k, interactions) carries only an exploratory "
              "per-family Holm p and is never called significant")


def uncontrolled_rows(results, alpha: float = DEFAULT_ALPHA, limit: int = 10):
    """Rows of the headline metric outside the marked set (another top-k, interactions) whose
    exploratory per-family Holm p is below α, smallest p first: gains or losses the marks do not
    cover, to be confirmed with ``tune`` on held-out questions, never called significant."""
    columns = getattr(results, "columns", ())
    if "marked_set" not in columns or f"p_{DECISION_TEST}_holm" not in columns:
        return results.iloc[:0]
    metric = headline_metric(results["metric"])
    frame = results[(results["metric"] == metric) & ~results["marked_set"].astype(bool)
                    & (results[f"p_{DECISION_TEST}_holm"] < alpha)]
    return frame.sort_values(f"p_{DECISION_TEST}_holm", kind="stable").head(limit)


def significance_manifest(results, alpha: float = DEFAULT_ALPHA) -> dict:
    """What the manifest says about the tests: the method and every family with its size."""
    families = {}
    if "family_axis" in getattr(results, "columns", ()):
        for axis, group in results[results["family"].notna()].groupby("family_axis", sort=False):
            sizes = group.groupby("family").size()
            families[axis] = {"question": family_questions()[axis], "families": int(len(sizes)),
                              "comparisons_per_family": sorted({int(v) for v in sizes}),
                              "significant": int(group["significant"].sum()),
                              "exploratory_below_alpha": int((group[f"p_{DECISION_TEST}_holm"] < alpha).sum())}
    marked = int(results["marked_set"].sum()) if "marked_set" in getattr(results, "columns", ()) else 0
    return {"decision_test": policy.TEST_TEXT,
            "exploratory_tests": "paired Student's t (exact sign-flip when ≤ 16 non-zero differences or a constant "
                                 "difference) and Wilcoxon signed-rank, Holm within each family",
            "error_rate": ERROR_RATE, "alpha": alpha, "marked_set_size": marked,
            "correction": "Holm over the marked set (headline metric at the largest top-k, one setting moved); "
                          "per-family Holm elsewhere, exploratory only",
            "significant": marked_set_text(results, alpha) if marked else "no comparison can be marked",
            "families": families}


def family_summary(results) -> list[str]:
    """One line per family axis: what it asks, how many comparisons each family holds, how many
    came out significant (for the CLI and the report)."""
    lines = []
    for axis, info in significance_manifest(results)["families"].items():
        sizes = "/".join(str(v) for v in info["comparisons_per_family"])
        exploratory = info.get("exploratory_below_alpha")
        lines.append(f"{axis}: {info['families']} families of {sizes} comparisons "
                     f"({info['question']}); {info['significant']} significant"
                     + ("" if exploratory is None else f" ({exploratory} below α in the exploratory per-family view)"))
    return lines
