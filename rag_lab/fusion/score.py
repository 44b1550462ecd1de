"""Score-based fusion (LlamaIndex's relative-score and distribution-based modes), by node id.

Each leg's scores are min-max scaled (``relative``) or scaled over mean ± 3σ (``dist_based``),
multiplied by the leg's weight, and summed per id.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def scale_scores(scores: Sequence[float], dist_based: bool = False) -> list[float]:
    if not scores:
        return []
    if dist_based:
        mean = sum(scores) / len(scores)
        std = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
        low, high = mean - 3 * std, mean + 3 * std
    else:
        low, high = min(scores), max(scores)
    if high == low:
        return [1.0 if high > 0 else 0.0 for _ in scores]
    return [(s - low) / (high - low) for s in scores]


def leg_contributions(
    leg: Sequence[tuple[Hashable, float]], weight: float = 1.0, dist_based: bool = False
) -> dict[Hashable, float]:
    """``{id: weight * scaled score}`` for one leg (first occurrence of an id wins)."""
    scaled = scale_scores([score for _, score in leg], dist_based)
    contributions: dict[Hashable, float] = {}
    for (item, _), value in zip(leg, scaled):
        contributions.setdefault(item, weight * value)
    return contributions
