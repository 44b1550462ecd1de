"""One tie rule for every leg, so a top-p leg is a prefix of the top-P leg (p < P).

Engines order equal scores their own way, and which members of a tied group make the cut can
change with the limit asked for (bm25s partitions the score array; Qdrant's sparse search returns
some of the points sharing a score). The ablation grid takes the top-p of a leg retrieved once at
the largest prefetch, and the live ``fusion`` retriever asks for top-p directly: both must see the
same p candidates. So every leg is ordered by score, best first, and equal scores by a stable key —
the corpus position in bm25s, the point id in the vector engine — with the whole tied group at the
cut fetched before it is cut. ``hybrid`` is the exception: Qdrant's prefetch fuses its own top-p
lists, in its own tie order, so hybrid and its grid use those (``HybridRetriever.engine_legs``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

LEG_TIE_RULE = "score best first; equal scores by corpus position (bm25s) or point id (vector engine)"
TIE_MARGIN = 10  # extra results fetched so that a tie at the cut is usually seen whole in one request


def top_positions(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` best (position, score) pairs of a full score array with a positive score, equal
    scores in position order (the whole array is known, so the tie at the cut is always whole)."""
    scores = np.asarray(scores, dtype=float)
    k = min(int(k), scores.size)
    if k <= 0:
        return []
    kth = np.partition(scores, scores.size - k)[scores.size - k]  # the k-th best score
    candidates = np.flatnonzero(scores >= kth)
    order = candidates[np.lexsort((candidates, -scores[candidates]))][:k]
    return [(int(i), float(scores[i])) for i in order if scores[i] > 0]


def stable_legs(fetch: Callable[[int], Sequence[Sequence]], limit: int) -> list[list]:
    """``fetch(n)`` returns legs (lists of hits with ``.id`` and ``.score``, best first, ``n`` deep
    each); the first ``limit`` of each leg ordered by (score desc, id), fetching deeper until no
    leg has a tie running past what was fetched."""
    n = limit + TIE_MARGIN
    while True:
        legs = fetch(n)
        if all(len(leg) < n or leg[-1].score != leg[limit - 1].score for leg in legs):
            break
        n *= 2
    return [sorted(leg, key=lambda h: (-h.score, str(h.id)))[:limit] for leg in legs]
