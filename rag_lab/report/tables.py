"""Tidy result frames → small display tables (CI strings, significance marks)."""

from __future__ import annotations

import math

ALPHA = 0.05


def fmt_ci(mean: float, low: float, high: float, digits: int = 3) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "—"
    if low is None or (isinstance(low, float) and math.isnan(low)):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def mark(row) -> str:
    """▲ / ▼: better / worse than the baseline, significant with the family-wise error held over
    every row that can be marked (ablations: Holm over the marked set, see
    :mod:`rag_lab.evaluate.ablation.significance`); '=' baseline itself; '' not significant."""
    if row.get("config") == row.get("baseline"):
        return "= baseline"
    if bool(row.get("significant")) and not _nan(row.get("delta")):
        return "▲ sig." if row["delta"] > 0 else "▼ sig."
    return ""


def _nan(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _fmt_p(value) -> str:
    return "—" if _nan(value) else (f"{value:.3f}" if value >= 0.001 else "<0.001")


def display(frame, metrics: list[str] | None = None):
    """Rows of a results frame with ``mean [CI]``, Δ vs baseline, Holm-adjusted p-values, the family
    each correction ran over (ablations) and a mark."""
    import pandas as pd

    if metrics is not None:
        frame = frame[frame["metric"].isin(metrics)]
    rows = []
    for _, row in frame.iterrows():
        row = row.to_dict()
        rows.append({
            "mode": row["mode"], "k": row["k"], "prefetch": row["prefetch"],
            "weights": f"{row['dense_weight']:g}:{row['sparse_weight']:g}", "top-k": row["top_k"],
            "metric": row["metric"], "mean [95% CI]": fmt_ci(row["mean"], row["ci_low"], row["ci_high"]),
            "Δ vs baseline": "—" if _nan(row.get("delta")) else f"{row['delta']:+.3f}",
            **({"p (FWER-adjusted)": _fmt_p(row.get("p_adjusted")) if row.get("marked_set") else "not controlled",
                "decided by": row.get("decided_by") or "—"} if "p_adjusted" in row else {}),
            ("p (t, family Holm, exploratory)" if "p_adjusted" in row else "p (t, Holm)"): _fmt_p(row.get("p_student_holm")),
            **({"p (Wilcoxon, Holm)": _fmt_p(row.get("p_wilcoxon_holm"))} if "p_wilcoxon_holm" in row
               else {"p (Fisher, Holm)": _fmt_p(row.get("p_fisher_holm"))}),
            **({"Holm family (size)": "—" if not isinstance(row.get("family"), str)
                else f"{row['family']} ({int(row['family_size'])})"} if "family" in row else {}),
            "significance": mark(row),
        })
    return without_empty_marks(pd.DataFrame(rows))


def without_empty_marks(frame):
    """Drop the significance column when no row has a mark (a column of blanks reads as a glitch)."""
    if "significance" in frame.columns and not frame["significance"].astype(bool).any():
        return frame.drop(columns="significance")
    return frame


# The grid's recall@top_k (ranx, on the documents folded from the top-k chunks, judged = source files)
# and RAGAS's ID-based context recall (retrieved ∩ source files / source files) are the same number.
DUPLICATE_METRICS = {"id_context_recall": "recall@top_k"}


def one_recall(results):
    """``results`` without the rows of a metric that repeats another one present (id_context_recall
    when recall@top_k is there): the report shows each number once."""
    present = set(results["metric"])
    dropped = [m for m, kept in DUPLICATE_METRICS.items() if m in present and kept in present]
    return results[~results["metric"].isin(dropped)] if dropped else results


def main_metric(results) -> str:
    """The metric a results frame is ranked by: nDCG at the top-k (``ndcg@top_k``; older runs: ``ndcg``)."""
    metrics = list(dict.fromkeys(results["metric"]))
    return next((m for m in ("ndcg@top_k", "ndcg") if m in metrics), metrics[0] if metrics else "ndcg@top_k")


def best_rows(results, metric: str | None = None):
    """The results rows of the best configuration per mode and top-k by ``metric``."""
    frame = results[results["metric"] == (metric or main_metric(results))]
    if frame.empty:
        frame = results[results["metric"] == results["metric"].iloc[0]]
    return frame.loc[frame.groupby(["mode", "top_k"])["mean"].idxmax()].sort_values(["top_k", "mode"])


def best_configs(results, metric: str | None = None):
    """The best configuration per mode and top-k by ``metric`` (default :func:`main_metric`)."""
    return display(best_rows(results, metric))


def baseline_rows(results):
    """Each mode at the default k and prefetch (equal weights), every top-k and metric."""
    from rag_lab.retrieve.configuration import DEFAULTS

    frame = results
    spec_k = DEFAULTS.fusion_k if DEFAULTS.fusion_k in set(frame["k"]) else frame["k"].max()
    spec_p = DEFAULTS.prefetch if DEFAULTS.prefetch in set(frame["prefetch"]) else frame["prefetch"].max()
    rows = frame[(frame["k"] == spec_k) & (frame["prefetch"] == spec_p)
                 & (frame["dense_weight"] == 1.0) & (frame["sparse_weight"] == 1.0)]
    if rows.empty:
        rows = frame[(frame["k"] == spec_k) & (frame["prefetch"] == spec_p)]
    return rows.sort_values(["mode", "top_k", "metric"])


def significant_rows(results, limit: int = 30):
    """Configurations significantly different from their baseline, largest |Δ| first — in an
    ablation, those that move one setting (k, prefetch, weights, mode) before the exploratory
    interactions (several settings at once)."""
    frame = results[results["significant"].fillna(False).astype(bool)]
    interaction = (frame["family_axis"] == "interactions") if "family_axis" in frame else False
    order = frame.assign(_late=interaction, _size=-frame["delta"].abs()).sort_values(["_late", "_size"], kind="stable")
    return frame.loc[order.index].head(limit)


def wide(frame, index=("mode", "k", "prefetch", "top_k")):
    """One row per configuration, one column per metric holding ``mean [CI]`` and its mark."""
    import pandas as pd

    if frame.empty:
        return pd.DataFrame()
    cells = frame.assign(cell=[f"{fmt_ci(r['mean'], r['ci_low'], r['ci_high'])} {mark(r)}".strip()
                               for _, r in frame.iterrows()])
    table = cells.pivot_table(index=list(index), columns="metric", values="cell", aggfunc="first")
    table.columns.name = None
    return table.reset_index()
