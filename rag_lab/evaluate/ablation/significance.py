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

Holm's correction runs within each family, never over the whole grid (a 1,320-comparison family
made every real effect invisible). The decision test is the two-sided paired Student's t
(analytic: its p-value can reach any threshold, which a randomization test with N permutations
cannot below 1/(N + 1)); the Wilcoxon signed-rank test is reported beside it as a check that does
not assume normal differences. ``significant`` = Student's t, Holm-adjusted within its family, < α.
"""

from __future__ import annotations

import numpy as np

from rag_lab.evaluate.ablation.grid import Config, GridSpec
from rag_lab.evaluate.stats import DEFAULT_ALPHA, bootstrap_ci, bootstrap_matrix, holm_within, paired_p_value

FAMILY_QUESTIONS = {
    "k": "does RRF k matter? each k against the default k, at the default prefetch and weights",
    "prefetch": "does the prefetch depth matter? each prefetch against the default, at the default k and weights",
    "weights": "do the leg weights matter? each weight pair against the default pair, at the default k and prefetch",
    "max_per_doc": "does a cap of chunks per document matter? each cap against no cap, at the default k, prefetch "
                   "and weights",
    "mode": "does the fused mode matter? each mode's baseline against the first mode's",
    "interactions": "configurations moving two or more settings at once, against their mode's baseline",
}
DECISION_TEST = "student"
CHECK_TEST = "wilcoxon"


def _moved(config: Config, base: Config) -> list[str]:
    moved = []
    if config.k != base.k:
        moved.append("k")
    if config.prefetch != base.prefetch:
        moved.append("prefetch")
    if (config.dense_weight, config.sparse_weight) != (base.dense_weight, base.sparse_weight):
        moved.append("weights")
    if config.max_per_doc != base.max_per_doc:
        moved.append("max_per_doc")
    return moved


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


def _score_rows(per_query: dict, configs: list[Config], seed: int) -> list[dict]:
    """One row per configuration × metric: mean and bootstrap CI (NaN-free rows in one matrix pass)."""
    rows = []
    metrics = sorted({m for per_metric in per_query.values() for m in per_metric})
    for metric in metrics:
        chosen = [c for c in configs if per_query[c.id].get(metric)]
        if not chosen:
            continue
        queries = sorted(per_query[chosen[0].id][metric])
        matrix = np.array([[per_query[c.id][metric].get(q, np.nan) for q in queries] for c in chosen])
        complete = ~np.isnan(matrix).any(axis=1)
        mean, low, high = (np.full(len(chosen), np.nan) for _ in range(3))
        if complete.any():
            mean[complete], low[complete], high[complete] = bootstrap_matrix(matrix[complete], seed=seed)
        for i in np.flatnonzero(~complete):
            ci = bootstrap_ci(matrix[i], seed=seed)
            mean[i], low[i], high[i] = ci["mean"], ci["ci_low"], ci["ci_high"]
        for i, config in enumerate(chosen):
            rows.append({**config.to_dict(), "metric": metric, "mean": mean[i], "ci_low": low[i],
                         "ci_high": high[i], "n": int((~np.isnan(matrix[i])).sum()),
                         "n_nan": int(np.isnan(matrix[i]).sum())})
    return rows


def paired_comparison(per_query: dict, config_id: str, baseline_id: str, metric: str, memo: dict) -> dict:
    """Δ (config − baseline) and both tests' p-values on the questions both scored (NaN pairs dropped).
    ``per_query``: system → metric → question → score; ``memo`` is shared across calls."""
    scores, base = per_query[config_id].get(metric, {}), per_query[baseline_id].get(metric, {})
    queries = sorted(set(scores) & set(base))
    a = np.array([base[q] for q in queries], dtype=float)
    b = np.array([scores[q] for q in queries], dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    key = (a.tobytes(), b.tobytes())
    if key not in memo:  # grids repeat the same score vectors: test each pair once
        memo[key] = {f"p_{test}": paired_p_value(a, b, test) for test in (DECISION_TEST, CHECK_TEST)}
    return {"delta": float((b - a).mean()) if a.size else float("nan"), **memo[key]}


def summarise(per_query: dict, configs: list[Config], spec: GridSpec, seed: int = 42,
              alpha: float = DEFAULT_ALPHA) -> "pandas.DataFrame":  # noqa: F821
    """Tidy table: one row per configuration × metric with mean, bootstrap 95 % CI, its baseline,
    Δ, both tests' p-values raw and Holm-adjusted within the row's family, the family's name and
    size, and ``significant`` (see the module doc)."""
    import pandas as pd

    table = pd.DataFrame(_score_rows(per_query, configs, seed))
    if table.empty:
        return table
    by_id = {c.id: c for c in configs}
    memo: dict = {}
    extra = []
    for row in table.itertuples(index=False):
        config = by_id[row.config]
        found = comparison_for(config, spec)
        if found is None or found[1] not in per_query:
            extra.append({"baseline": config.id if found is None else found[1], "family_axis": None,
                          "family": None, "delta": np.nan, "p_student": np.nan, "p_wilcoxon": np.nan})
            continue
        axis, baseline = found
        extra.append({"baseline": baseline, "family_axis": axis,
                      "family": family_name(axis, config.mode, config.top_k, row.metric),
                      **paired_comparison(per_query, config.id, baseline, row.metric, memo)})
    table = pd.concat([table, pd.DataFrame(extra, index=table.index)], axis=1)
    return correct_within_families(table, alpha)


def correct_within_families(table: "pandas.DataFrame", alpha: float = DEFAULT_ALPHA) -> "pandas.DataFrame":  # noqa: F821
    """Adds ``family_size``, both tests' Holm-adjusted p-values (within each ``family``; rows
    without one stay NaN) and ``significant`` (the decision test's adjusted p < ``alpha``)."""
    table["family_size"] = table.groupby("family")["family"].transform("size")
    for test in (DECISION_TEST, CHECK_TEST):
        table[f"p_{test}_holm"] = holm_within(table, "family", f"p_{test}")
    table["significant"] = (table[f"p_{DECISION_TEST}_holm"] < alpha).fillna(False).astype(bool)
    return table


def significance_manifest(results, alpha: float = DEFAULT_ALPHA) -> dict:
    """What the manifest says about the tests: the method and every family with its size."""
    families = {}
    if "family_axis" in getattr(results, "columns", ()):
        for axis, group in results[results["family"].notna()].groupby("family_axis", sort=False):
            sizes = group.groupby("family").size()
            families[axis] = {"question": FAMILY_QUESTIONS[axis], "families": int(len(sizes)),
                              "comparisons_per_family": sorted({int(v) for v in sizes}),
                              "significant": int(group["significant"].sum())}
    return {"decision_test": "paired Student's t, two-sided (analytic)",
            "check_test": "Wilcoxon signed-rank, two-sided (zero differences dropped)",
            "correction": "Holm within each family (one axis × mode × top-k × metric), not over the grid",
            "alpha": alpha, "significant": "Student's t, Holm-adjusted within its family, < alpha",
            "families": families}


def family_summary(results) -> list[str]:
    """One line per family axis: what it asks, how many comparisons each family holds, how many
    came out significant (for the CLI and the report)."""
    lines = []
    for axis, info in significance_manifest(results)["families"].items():
        sizes = "/".join(str(v) for v in info["comparisons_per_family"])
        lines.append(f"{axis}: {info['families']} families of {sizes} comparisons "
                     f"({info['question']}); {info['significant']} significant")
    return lines
