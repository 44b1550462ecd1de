"""The selection rule: the cheapest configuration within one standard error of the best.

Breiman's one-standard-error rule: on the dev split the configuration with the highest mean is the
*best*; every configuration whose mean is at least ``best − SE(best)`` (SE = sample standard
deviation of the best's per-question scores / √n) is statistically indistinguishable from it on
these questions, and among those the cheapest (then the simplest) wins. This keeps a lever only when
its gain is larger than the noise of the dev split, and does not pay for a larger context or a
deeper prefetch that buys nothing measurable.

Cost order (lexicographic, cheapest first), what each configuration costs per question:

1. ``num_queries`` — LLM calls for query rewrites (a generation each: by far the dearest);
2. ``top_k`` — chunks handed to the generator (prompt tokens on every answer);
3. ``prefetch`` — candidates per leg (retrieval work and the fusion's input);
4. settings moved away from the lab's default (RRF k, leg weights, per-document cap) — fewer is simpler;
5. mode — ``fusion`` before ``hybrid`` (the same two legs; hybrid pays a second sparse index in Qdrant);
6. the configuration id (a deterministic last tie-break).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rag_lab.evaluate.ablation.grid import Config
from rag_lab.retrieve.configuration import Axis, compared_axes, axes

MODE_COST = {"fusion": 0, "hybrid": 1}


def priced_axes() -> list[Axis]:
    """The axes with a rank of their own in the cost order, cheapest first (top-k, prefetch)."""
    return sorted((a for a in axes() if a.cost is not None), key=lambda a: a.cost)


def moved_axes() -> list[Axis]:
    """The axes counted as "settings moved from the default" (RRF k, leg weights, cap)."""
    return [a for a in compared_axes() if a.cost is None]


def cost_order() -> tuple[str, ...]:
    """The cost order as tune prints and records it (see the module doc)."""
    return ("LLM query rewrites (num_queries)", *(a.cost_text for a in priced_axes()),
            f"settings moved from the default ({', '.join(a.short for a in moved_axes())})",
            "mode (fusion before hybrid)")


@dataclass(frozen=True)
class Candidate:
    """One configuration on the dev split: its per-question scores (same question order for all)."""

    config: Config
    scores: np.ndarray
    num_queries: int = 1

    @property
    def mean(self) -> float:
        return float(np.mean(self.scores))

    @property
    def standard_error(self) -> float:
        n = self.scores.size
        return float(np.std(self.scores, ddof=1) / np.sqrt(n)) if n > 1 else 0.0


def moved_settings(config: Config, default: Config) -> int:
    """How many of the :func:`moved_axes` (RRF k, leg weights, cap) differ from ``default``."""
    return sum(a.value_of(config) != a.value_of(default) for a in moved_axes())


def cost_key(candidate: Candidate, default: Config) -> tuple:
    c = candidate.config
    return (candidate.num_queries, *(a.value_of(c) for a in priced_axes()), moved_settings(c, default),
            MODE_COST.get(c.mode, 9), c.id)


@dataclass(frozen=True)
class Selection:
    best: Candidate
    chosen: Candidate
    threshold: float  # best mean − one standard error
    within: list[Candidate]  # every candidate at or above the threshold, cheapest first
    tried: int = 0  # every candidate
    lowest: float = float("nan")  # the lowest candidate's mean

    def separation(self, metric: str) -> str | None:
        """A sentence when the metric cannot separate the configurations on dev (all tie, or all within
        one standard error of the best), else None."""
        if self.tried < 2:
            return None
        if self.lowest == self.best.mean:
            return (f"all {self.tried:,} configurations tie at {self.best.mean:.3f} on dev: {metric} cannot tell "
                    "them apart here")
        if len(self.within) == self.tried:
            return (f"all {self.tried:,} configurations are within one standard error of the best on dev "
                    f"({self.lowest:.3f} to {self.best.mean:.3f}): {metric} cannot separate them here")
        return None

    def to_dict(self) -> dict:
        return {"best": self.best.config.id, "best_mean": self.best.mean, "best_se": self.best.standard_error,
                "threshold": self.threshold, "chosen": self.chosen.config.id, "chosen_mean": self.chosen.mean,
                "within_one_se": len(self.within), "tried": self.tried, "lowest_mean": self.lowest,
                "cost_order": list(cost_order())}


def select_one_se(candidates: Sequence[Candidate], default: Config) -> Selection:
    """The one-standard-error rule with ties going to the cheaper (see the module doc).
    ``default`` is the lab's default configuration, which "settings moved" counts from."""
    if not candidates:
        raise ValueError("no configurations to select from")
    sizes = {c.scores.size for c in candidates}
    if len(sizes) != 1:
        raise ValueError(f"every configuration must be scored on the same questions, got sizes {sorted(sizes)}")
    top = max(c.mean for c in candidates)
    # the highest mean, and of equal means the cheapest
    best = min((c for c in candidates if c.mean == top), key=lambda c: cost_key(c, default))
    threshold = best.mean - best.standard_error
    within = sorted((c for c in candidates if c.mean >= threshold - 1e-12), key=lambda c: cost_key(c, default))
    return Selection(best, within[0], threshold, within, len(candidates), min(c.mean for c in candidates))


def candidates_from(scores: Mapping[Config, Mapping[str, float]], qids: Sequence[str],
                    num_queries: Mapping[Config, int] | None = None) -> list[Candidate]:
    """Per-question score maps → candidates over ``qids`` (a question a configuration did not
    score counts 0: it returned nothing for it)."""
    return [Candidate(config, np.array([float(per_q.get(q, 0.0)) for q in qids]),
                      (num_queries or {}).get(config, 1)) for config, per_q in scores.items()]
