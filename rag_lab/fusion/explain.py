"""Per-result explanations of a two-leg fusion: each leg's rank, score and RRF term.

``fused_score == dense_term + sparse_term`` exactly (a leg that did not return the item adds 0).

Ties: RRF gives equal scores to, e.g., an item 3rd in the dense list only and one 3rd in the
sparse list only. :func:`rank_fused` holds the one tie rule every fused mode follows (``fusion``,
``hybrid`` plain and explained, the ablation grid): the dense leg's order first, then the sparse
leg's, then the id. It is what a stable sort of LlamaIndex's ``QueryFusionRetriever`` output gives
(its first retriever's results are inserted first), so tie order is never engine-dependent.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from rag_lab.fusion.rrf import DEFAULT_RRF_K, rrf_term

Source = Literal["both", "dense_only", "sparse_only"]


@dataclass(frozen=True)
class Explanation:
    dense_rank: int | None
    dense_score: float | None
    sparse_rank: int | None
    sparse_score: float | None
    dense_term: float
    sparse_term: float
    fused_score: float
    source: Source
    k: float
    dense_weight: float = 1.0
    sparse_weight: float = 1.0

    def to_dict(self) -> dict:
        return asdict(self)


def _positions(leg: Sequence[tuple[Hashable, float]]) -> dict[Hashable, tuple[int, float]]:
    positions: dict[Hashable, tuple[int, float]] = {}
    for item, score in leg:
        if item not in positions:
            positions[item] = (len(positions) + 1, float(score))
    return positions


def explain_fusion(
    dense: Sequence[tuple[Hashable, float]],
    sparse: Sequence[tuple[Hashable, float]],
    k: float = DEFAULT_RRF_K,
    dense_weight: float = 1.0,
    sparse_weight: float = 1.0,
) -> dict[Hashable, Explanation]:
    """Explanations for every id found in either leg (legs are ``[(id, score)]`` best first)."""
    dense_pos, sparse_pos = _positions(dense), _positions(sparse)
    explanations: dict[Hashable, Explanation] = {}
    for item in list(dense_pos) + [i for i in sparse_pos if i not in dense_pos]:
        d, s = dense_pos.get(item), sparse_pos.get(item)
        d_term = rrf_term(d[0], k, dense_weight) if d else 0.0
        s_term = rrf_term(s[0], k, sparse_weight) if s else 0.0
        source: Source = "both" if d and s else "dense_only" if d else "sparse_only"
        explanations[item] = Explanation(
            dense_rank=d[0] if d else None, dense_score=d[1] if d else None,
            sparse_rank=s[0] if s else None, sparse_score=s[1] if s else None,
            dense_term=d_term, sparse_term=s_term, fused_score=d_term + s_term, source=source,
            k=k, dense_weight=dense_weight, sparse_weight=sparse_weight,
        )
    return explanations


#: Names the tie rule in cache keys: results ranked under another rule are never reused.
TIE_RULE = "dense-rank,sparse-rank,id"


def tie_key(item: Hashable, explanation: Explanation) -> tuple:
    """Sort key of a fused result: best score first; ties by dense rank, then sparse rank (absent
    from a leg = after every rank), then id."""
    inf = float("inf")
    return (-explanation.fused_score, explanation.dense_rank or inf, explanation.sparse_rank or inf, str(item))


def rank_fused(explained: Mapping[Hashable, Explanation]) -> list[tuple[Hashable, Explanation]]:
    """``explain_fusion``'s items best first, ties by :func:`tie_key` (the one tie rule)."""
    return sorted(explained.items(), key=lambda kv: tie_key(*kv))


def explanations_frame(results) -> "pandas.DataFrame":  # noqa: F821 - pandas imported lazily
    """Retrieved ``NodeWithScore`` list → one row per result with its explanation columns."""
    import pandas as pd

    rows = []
    for rank, result in enumerate(results, start=1):
        meta = result.node.metadata
        row = {"rank": rank, "score": result.score, "doc_id": meta.get("doc_id"),
               "filename": meta.get("filename"), "page": meta.get("page")}
        row.update(meta.get("explanation") or {})
        rows.append(row)
    return pd.DataFrame(rows)
