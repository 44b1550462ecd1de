"""Static figures (matplotlib, Agg) for reports and notebooks: line plots with CI bands, heatmaps.

Every function returns a matplotlib ``Figure`` (shown inline in a notebook, whatever the
backend); :func:`to_svg` renders one to an inline ``<svg>``
string (text as paths: no font files, no links), which is how reports embed them.
"""

from __future__ import annotations

import io

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

METRIC_LABELS = {
    # the ablation grid's metrics: ranx metric@k with k = the configuration's top-k
    "ndcg@top_k": "nDCG@top-k (ranx ndcg@k, k = top-k)", "recall@top_k": "Recall@top-k (ranx recall@k)",
    "precision@top_k": "Precision@top-k (ranx precision@k)", "mrr@top_k": "MRR@top-k (ranx mrr@k)",
    # run folders written before the cut-off: ranx's uncut metrics on the folded documents
    "ndcg": "nDCG (no cut-off)", "recall": "Recall (no cut-off)", "precision": "Precision (no cut-off)",
    "mrr": "MRR (no cut-off)",
    "id_context_precision": "ID context precision (RAGAS)", "id_context_recall": "ID context recall (RAGAS)",
}


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def to_svg(fig) -> str:
    """The figure as an inline ``<svg>`` element (fonts drawn as paths, no external reference)."""
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "rag-lab"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def fusion_k_lines(results, metric: str = "ndcg@top_k", prefetch: int | None = None, weights=(1.0, 1.0)):
    """Metric vs RRF k, one line per mode × top-k, with the bootstrap 95 % CI as a band."""
    frame = results[(results["metric"] == metric)
                    & (results["dense_weight"] == weights[0]) & (results["sparse_weight"] == weights[1])]
    if prefetch is None:
        prefetch = int(frame["prefetch"].max())
    frame = frame[frame["prefetch"] == prefetch]
    fig, ax = plt.subplots(figsize=(7, 4))
    styles = {"fusion": "-", "hybrid": "--"}
    for (mode, top_k), group in frame.groupby(["mode", "top_k"]):
        group = group.sort_values("k")
        line, = ax.plot(group["k"], group["mean"], styles.get(mode, "-"), marker="o", markersize=3,
                        label=f"{mode}, top-{top_k}")
        ax.fill_between(group["k"], group["ci_low"], group["ci_high"], color=line.get_color(), alpha=0.12)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("RRF k (1/(k + rank), ranks from 1)")
    ax.set_ylabel(metric_label(metric))
    ax.set_title(f"{metric_label(metric)} vs fusion k (prefetch {prefetch}; bands: 95 % bootstrap CI)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return fig


def prefetch_topk_heatmap(results, mode: str, metric: str = "ndcg@top_k", k: int | None = None, weights=(1.0, 1.0),
                          unconfirmed: dict | None = None):
    """Heatmap of a metric over prefetch (rows) × top-k (columns) at one k (no cap when the grid has
    it). ``unconfirmed`` (axis → values the live spot check could not confirm, for this mode): those
    cells get a † after their value."""
    from rag_lab.evaluate.ablation.spot_check import is_unconfirmed
    from rag_lab.retrieve.configuration import DEFAULTS

    frame = results[(results["metric"] == metric) & (results["mode"] == mode)
                    & (results["dense_weight"] == weights[0]) & (results["sparse_weight"] == weights[1])]
    cap = DEFAULTS.max_per_doc
    if "max_per_doc" in frame:  # one cap per cell, not the mean over caps
        cap = cap if cap in set(frame["max_per_doc"]) else int(frame["max_per_doc"].min())
        frame = frame[frame["max_per_doc"] == cap]
    if k is None:
        k = DEFAULTS.fusion_k if DEFAULTS.fusion_k in set(frame["k"]) else int(frame["k"].iloc[0])
    frame = frame[frame["k"] == k]
    table = frame.pivot_table(index="prefetch", columns="top_k", values="mean")
    fig, ax = plt.subplots(figsize=(5, 3.6))
    image = ax.imshow(table.to_numpy(), cmap="viridis", aspect="auto", origin="lower")
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns])
    ax.set_yticks(range(len(table.index)), [str(i) for i in table.index])
    ax.set_xlabel("top-k")
    ax.set_ylabel("prefetch per leg")
    values = table.to_numpy()
    middle = np.nanmean(values) if values.size else 0
    for (row, col), value in np.ndenumerate(values):
        if not np.isnan(value):
            cell = {"mode": mode, "k": k, "prefetch": table.index[row], "top_k": table.columns[col],
                    "dense_weight": weights[0], "sparse_weight": weights[1], "max_per_doc": cap}
            dagger = " †" if unconfirmed and is_unconfirmed(cell, {mode: unconfirmed}) else ""
            ax.text(col, row, f"{value:.3f}{dagger}", ha="center", va="center", fontsize=8,
                    color="white" if value < middle else "black")
    ax.set_title(f"{mode}: {metric_label(metric)} (k = {k})")
    fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def mode_bars(summary, metric: str, value: str = "mean"):
    """Bar chart of one metric per mode with CI error bars (``summary``: mode, metric, mean, ci_low, ci_high)."""
    frame = summary[summary["metric"] == metric]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    x = np.arange(len(frame))
    means = frame[value].to_numpy(dtype=float)
    low = means - frame["ci_low"].to_numpy(dtype=float)
    high = frame["ci_high"].to_numpy(dtype=float) - means
    ax.bar(x, means, yerr=[np.nan_to_num(low), np.nan_to_num(high)], capsize=4, color="#4c72b0")
    ax.set_xticks(x, frame["mode"].tolist())
    ax.set_ylabel(metric_label(metric))
    ax.set_title(f"{metric_label(metric)} per mode (95 % bootstrap CI)")
    ax.grid(axis="y", alpha=0.3)
    return fig


def mode_metric_bars(summary):
    """Every metric (groups) × mode (bars side by side) with 95 % CI whiskers: an evaluation run at a
    glance (``summary``: mode, metric, mean, ci_low, ci_high). Metrics on a 0–1 scale only."""
    frame = summary[(summary["mean"] >= 0) & (summary["mean"] <= 1)]
    metrics = list(dict.fromkeys(frame["metric"]))
    modes = list(dict.fromkeys(frame["mode"]))
    width = 0.8 / max(len(modes), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.75 * len(metrics) + 1.5), 3.8))
    x = np.arange(len(metrics))
    for i, mode in enumerate(modes):
        rows = frame[frame["mode"] == mode].set_index("metric").reindex(metrics)
        means = rows["mean"].to_numpy(dtype=float)
        err = [np.nan_to_num(means - rows["ci_low"].to_numpy(dtype=float)),
               np.nan_to_num(rows["ci_high"].to_numpy(dtype=float) - means)]
        ax.bar(x - 0.4 + width * (i + 0.5), np.nan_to_num(means), width=width * 0.92, yerr=err, capsize=2,
               label=mode, error_kw={"elinewidth": 0.8})
    ax.set_xticks(x, metrics, rotation=35, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean (95 % bootstrap CI)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=len(modes), loc="upper center", bbox_to_anchor=(0.5, 1.12), frameon=False)
    return fig


def latency_bars(latency, column: str = "p50_ms"):
    """Horizontal bars of latency per label (``latency``: label, p50_ms, p95_ms)."""
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.4 * max(len(latency), 1)))
    y = np.arange(len(latency))
    ax.barh(y, latency["p95_ms"], color="#dd8452", alpha=0.5, label="p95")
    ax.barh(y, latency[column], color="#4c72b0", label="p50")
    ax.set_yticks(y, latency["label"].tolist())
    ax.set_xlabel("milliseconds")
    ax.legend(fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    return fig


def contribution_bars(summary):
    """Stacked bars per query: the share of the fused score from the dense and the sparse leg."""
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.45 * max(len(summary), 1)))
    y = np.arange(len(summary))
    labels = [f"{q[:38]} ({kind})" for q, kind in zip(summary["query"], summary["kind"])]
    ax.barh(y, summary["dense_share"], color="#4c72b0", label="dense leg")
    ax.barh(y, summary["sparse_share"], left=summary["dense_share"], color="#dd8452", label="sparse leg")
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the fused (RRF) score in the top results")
    ax.legend(fontsize=8, loc="lower right")
    return fig
