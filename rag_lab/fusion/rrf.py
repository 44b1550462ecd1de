"""Reciprocal rank fusion with one documented convention.

Our k: ``term = 1 / (k + rank)``, rank counted **from 1**, as in the original paper and in
ranx. qdrant-client (local mode and server) scores ``1 / (k_q + rank0)`` with rank counted from
0, so the same fusion needs ``k_q = k + 1`` (:func:`qdrant_rrf_k`). LlamaIndex's stock
``QueryFusionRetriever`` uses ``1 / (60 + rank0)``, i.e. our k = 59.

Weights follow Qdrant's weighted RRF so that ``fusion`` and ``hybrid`` (fused inside Qdrant)
compute the same thing: a leg's weight divides its ranks, ``term = 1 / (k + rank / weight)``
(weight 2 makes that leg's 2nd item count like a 1st; weight ≤ 0 drops the leg). With all
weights 1 this is the unweighted formula above.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

DEFAULT_RRF_K = 60


def rrf_term(rank: int, k: float = DEFAULT_RRF_K, weight: float = 1.0) -> float:
    """The contribution of one list in which an item sits at 1-based ``rank``."""
    if rank < 1:
        raise ValueError(f"ranks count from 1, got {rank}")
    if k < 0:
        raise ValueError(f"RRF k must be ≥ 0, got {k}")
    if weight <= 0:
        return 0.0
    return 1.0 / (k + rank / weight)


def rrf_terms(ranks, k: float = DEFAULT_RRF_K, weight: float = 1.0):
    """:func:`rrf_term` over an array of 1-based ranks (``inf`` = not in the list → 0), vectorised
    for the ablation grid. ``k`` and ``weight`` broadcast against ``ranks``."""
    import numpy as np

    ranks = np.asarray(ranks, dtype=float)
    k = np.asarray(k, dtype=float)
    weight = np.asarray(weight, dtype=float)
    if np.any(ranks < 1):
        raise ValueError("ranks count from 1")
    if np.any(k < 0):
        raise ValueError("RRF k must be ≥ 0")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = 1.0 / (k + ranks / np.where(weight > 0, weight, 1.0))
    return np.where(weight > 0, terms, 0.0)


def qdrant_rrf_k(k: int) -> int:
    """The k to give Qdrant's ``Rrf`` so that it computes our ``1/(k + rank1)``."""
    return int(k) + 1


def rrf_fuse(
    rankings: Mapping[str, Sequence[Hashable]],
    k: float = DEFAULT_RRF_K,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[Hashable, float]]:
    """Fuse ranked id lists (best first) into ``[(id, score)]``, best first.

    An id repeated inside one list counts once, at its best rank. Ties keep first-seen order.
    """
    weights = weights or {}
    scores: dict[Hashable, float] = {}
    for leg, ids in rankings.items():
        seen: set[Hashable] = set()
        rank = 0
        for item in ids:
            if item in seen:
                continue
            seen.add(item)
            rank += 1
            scores[item] = scores.get(item, 0.0) + rrf_term(rank, k, weights.get(leg, 1.0))
    return sorted(scores.items(), key=lambda pair: pair[1], reverse=True)
