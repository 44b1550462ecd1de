"""Which leg finds what: dense vs sparse contributions to hybrid (or fusion) results per query.

Keyword queries (amounts like "$4,106", codes like "BCY-26") should lean on the sparse leg;
paraphrases on the dense leg. The explanations every fused result carries (both legs' ranks and
RRF terms) make this a table, not a guess.
"""

from __future__ import annotations

from collections.abc import Mapping

from rag_lab.config import Settings
from rag_lab.datasets import Dataset

KEYWORD = "keyword"
PARAPHRASE = "paraphrase"


def leg_contributions(dataset: Dataset, settings: Settings, queries: Mapping[str, str], mode: str = "hybrid",
                      top_k: int = 10, **params) -> "pandas.DataFrame":  # noqa: F821
    """``queries``: query → kind (e.g. keyword / paraphrase). One row per query × result with both
    legs' ranks and terms, the fused score and ``source`` ∈ {both, dense_only, sparse_only}."""
    import pandas as pd

    from rag_lab.fusion import explanations_frame
    from rag_lab.retrieve import build_retriever

    if mode not in ("hybrid", "fusion"):
        raise ValueError(f"leg contributions need a fused mode (hybrid or fusion), got {mode!r}")
    retriever = build_retriever(mode, settings, dataset, top_k=top_k, explain=True, **params)
    frames = []
    for query, kind in queries.items():
        frame = explanations_frame(retriever.retrieve(query))
        frame.insert(0, "kind", kind)
        frame.insert(0, "query", query)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def contribution_summary(frame: "pandas.DataFrame") -> "pandas.DataFrame":  # noqa: F821
    """Per query: the share of the summed fused score that each leg contributed, and how many
    results came from both legs, only dense, only sparse."""
    import pandas as pd

    rows = []
    for (query, kind), group in frame.groupby(["query", "kind"], sort=False):
        total = float(group["fused_score"].sum()) or 1.0
        counts = group["source"].value_counts()
        rows.append({"query": query, "kind": kind,
                     "dense_share": float(group["dense_term"].sum()) / total,
                     "sparse_share": float(group["sparse_term"].sum()) / total,
                     "both": int(counts.get("both", 0)), "dense_only": int(counts.get("dense_only", 0)),
                     "sparse_only": int(counts.get("sparse_only", 0)),
                     "top_doc": group.sort_values("rank")["filename"].iloc[0] if len(group) else None})
    return pd.DataFrame(rows)
