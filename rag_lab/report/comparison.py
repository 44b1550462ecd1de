"""Retrieval modes side by side: per-mode means with bootstrap CIs and significance against a
baseline mode, and latency percentiles (used by ``notebooks/02_mode_comparison.ipynb``).

The inputs are per-query scores, ``per_query[mode][metric][query_id] → score``: what
:func:`rag_lab.evaluate.retrieval.ir.evaluate_modes` returns (``IRReport.per_query``, ranx), or what
:func:`per_query_from_samples` makes of an evaluation run's tidy ``samples``. The statistics are
the package's own: seeded percentile bootstrap, and "significant" by the lab's comparison policy
(:mod:`rag_lab.evaluate.statistics.policy`: its decision test, Holm over every mode × metric of the table,
so the family-wise error over every mark stays ≤ α); paired Student's t and Fisher's randomization test,
each Holm-corrected, stand beside it as an exploratory view. Coverage figures (``judged@10``: the share of retrieved documents that carry a judgement)
say how far the other metrics can be trusted, not which mode is better: they are shown, never tested.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag_lab.evaluate.statistics import policy
from rag_lab.evaluate.statistics.significance import (DEFAULT_ALPHA, DEFAULT_PERMUTATIONS, DEFAULT_RESAMPLES, DEFAULT_SEED,
                                                      bootstrap_ci, compare_to_baseline)

# Shown with their CIs, never tested or marked: rag_lab.evaluate.retrieval.ir.JUDGED (not imported: that module
# loads the retrievers, and this one serves notebooks that only hold score tables).
COVERAGE_METRICS = ("judged@10",)

TABLE_COLUMNS = ["mode", "metric", "mean", "ci_low", "ci_high", "n", "n_nan", "baseline", "delta",
                 "p_student_holm", "p_fisher_holm", "p_value", "decided_by", "p_adjusted", "significant"]


def per_query_from_samples(samples, metrics: Sequence[str] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    """An evaluation run's tidy ``samples`` (mode, sample_id, metric, value) → ``{mode: {metric:
    {sample_id: value}}}``, modes and metrics in order of appearance. NaN (a failed score) is left
    out, so paired tests only pair scored samples."""
    frame = samples.dropna(subset=["value"])
    if metrics is not None:
        frame = frame[frame["metric"].isin(list(metrics))]
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    for (mode, metric), group in frame.groupby(["mode", "metric"], sort=False):
        per_query.setdefault(mode, {})[metric] = {str(k): float(v) for k, v in zip(group["sample_id"], group["value"])}
    return per_query


# Below this many scored samples no interval is drawn: a bootstrap of a handful of values resamples the
# same few numbers, and its interval reflects n more than the mean's uncertainty.
MIN_INTERVAL_N = 10


def mode_table(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], baseline: str, *,
               n_resamples: int = DEFAULT_RESAMPLES, n_permutations: int = DEFAULT_PERMUTATIONS,
               seed: int = DEFAULT_SEED, alpha: float = DEFAULT_ALPHA):
    """One row per mode × metric: mean with its seeded 95 % bootstrap interval, and against
    ``baseline`` the paired Δ, the policy's p (``p_value``, ``decided_by``, ``p_adjusted``: Holm over
    every mode × metric) and ``significant``, with the exploratory Holm-adjusted t and Fisher p beside
    it. The baseline's own rows carry NaN there and are never significant."""
    import numpy as np
    import pandas as pd

    if baseline not in per_query:
        raise ValueError(f"baseline {baseline!r} is not among the modes: {', '.join(per_query)}")
    rows = []
    for mode, metrics in per_query.items():
        for metric, scores in metrics.items():
            ci = bootstrap_ci(list(scores.values()), n_resamples=n_resamples, seed=seed)
            if ci["n"] < MIN_INTERVAL_N:
                ci = {**ci, "ci_low": float("nan"), "ci_high": float("nan")}
            rows.append({"mode": mode, "metric": metric, "mean": ci["mean"], "ci_low": ci["ci_low"],
                         "ci_high": ci["ci_high"], "n": ci["n"], "n_nan": ci["n_nan"], "baseline": baseline})
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS[:8])
    for column in ("delta", "p_student_holm", "p_fisher_holm", "p_value", "p_adjusted"):
        table[column] = np.nan
    table["decided_by"] = None
    table["significant"] = False
    if len(per_query) < 2 or table.empty:
        return table[TABLE_COLUMNS]
    tested = {mode: {m: s for m, s in metrics.items() if m not in COVERAGE_METRICS}
              for mode, metrics in per_query.items()}
    sig = compare_to_baseline(tested, baseline, alpha=alpha, n_permutations=n_permutations, seed=seed)
    for _, row in sig.iterrows():
        mask = (table["mode"] == row["system"]) & (table["metric"] == row["metric"])
        table.loc[mask, "delta"] = row["delta"]
        table.loc[mask, f"p_{row['test']}_holm"] = row["p_holm"]
    for _, row in policy.compare(tested, baseline, alpha, seed).iterrows():
        mask = (table["mode"] == row["system"]) & (table["metric"] == row["metric"])
        table.loc[mask, ["p_value", "decided_by", "p_adjusted", "significant"]] = (
            row["p_value"], row["decided_by"], row["p_adjusted"], bool(row["significant"]))
    table["significant"] = table["significant"].astype(bool)
    return table[TABLE_COLUMNS]


def mark(row) -> str:
    """'= baseline', '▲ sig.' / '▼ sig.' (the policy's test, Holm-corrected), or ''."""
    from rag_lab.report.tables import mark as table_mark

    return table_mark({**dict(row), "config": row["mode"]})


def wide_table(table, metrics: Sequence[str] | None = None):
    """Modes as rows (in the table's order), one column per metric: ``mean [CI] mark``."""
    import pandas as pd

    from rag_lab.report.tables import fmt_ci

    metrics = list(metrics) if metrics is not None else list(dict.fromkeys(table["metric"]))
    cells: dict[str, dict[str, str]] = {}
    for _, row in table[table["metric"].isin(metrics)].iterrows():
        text = f"{fmt_ci(row['mean'], row['ci_low'], row['ci_high'])} {mark(row)}".strip()
        cells.setdefault(row["mode"], {})[row["metric"]] = text
    frame = pd.DataFrame.from_dict(cells, orient="index")
    frame = frame.reindex(columns=[m for m in metrics if m in frame.columns])
    frame.index.name = "mode"
    return frame.fillna("—")


def significance_table(table):
    """The comparisons against the baseline: Δ and both Holm-adjusted p-values per mode × metric."""
    import pandas as pd

    from rag_lab.report.tables import _fmt_p

    rows = []
    for _, row in table[table["mode"] != table["baseline"]].iterrows():
        if row["metric"] in COVERAGE_METRICS:
            continue  # a coverage figure: not a comparison
        rows.append({"mode": row["mode"], "metric": row["metric"], "vs": row["baseline"], "n": int(row["n"]),
                     "Δ": "—" if pd.isna(row["delta"]) else f"{row['delta']:+.3f}",
                     "p (FWER-adjusted)": _fmt_p(row["p_adjusted"]),
                     "p (t, Holm)": _fmt_p(row["p_student_holm"]), "p (Fisher, Holm)": _fmt_p(row["p_fisher_holm"]),
                     "significance": mark(row) or "not sig."})
    return pd.DataFrame(rows, columns=["mode", "metric", "vs", "n", "Δ", "p (FWER-adjusted)", "p (t, Holm)",
                                       "p (Fisher, Holm)", "significance"])


def latency_frame(latencies_ms: Mapping[str, Mapping[str, float] | Sequence[float]]):
    """``{mode: per-query milliseconds}`` → one row per mode: label, p50_ms, p95_ms, mean_ms, n
    (the ``label`` / ``p50_ms`` / ``p95_ms`` columns are what :func:`figures.latency_bars` draws)."""
    import numpy as np
    import pandas as pd

    rows = []
    for mode, values in latencies_ms.items():
        x = np.asarray(list(values.values()) if isinstance(values, Mapping) else list(values), dtype=float)
        x = x[~np.isnan(x)]
        p50, p95 = (np.quantile(x, [0.5, 0.95]) if x.size else (np.nan, np.nan))
        rows.append({"label": mode, "p50_ms": float(p50), "p95_ms": float(p95),
                     "mean_ms": float(x.mean()) if x.size else float("nan"), "n": int(x.size)})
    return pd.DataFrame(rows, columns=["label", "p50_ms", "p95_ms", "mean_ms", "n"])


def answer_cost_frame(modes_frame):
    """An evaluation run's ``modes`` frame → per mode: answers, latency p50/p95 (s) and tokens per answer."""
    import pandas as pd

    rows = []
    for _, row in modes_frame.iterrows():
        answered = int(row["samples"]) - int(row["errors"])
        per = (lambda v: float(v) / answered) if answered else (lambda v: float("nan"))
        rows.append({"mode": row["mode"], "answers": answered, "errors": int(row["errors"]),
                     "latency_p50_s": row["latency_p50_s"], "latency_p95_s": row["latency_p95_s"],
                     "prompt_tokens/answer": per(row["prompt_tokens"]),
                     "completion_tokens/answer": per(row["completion_tokens"]),
                     "tokens/answer": per(row["total_tokens"]),
                     "cost_usd": row["cost_usd"],
                     "cites_nothing": row["cites_nothing"]})
    return pd.DataFrame(rows)
