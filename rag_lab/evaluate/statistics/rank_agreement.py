"""Do two question sets rank configurations alike? Kendall τ_b between the configurations' mean
scores under each, with a bootstrap interval over the questions, and its ceiling: τ_b between two
disjoint halves of one question set at a given number of questions.

``scores`` are ``configs × questions`` matrices (one row per configuration, same row order in both).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import kendalltau

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Agreement:
    tau_b: float
    ci_low: float
    ci_high: float
    n_a: int
    n_b: int

    def as_dict(self) -> dict[str, float | int]:
        return {"tau_b": round(self.tau_b, 4), "ci_low": round(self.ci_low, 4), "ci_high": round(self.ci_high, 4),
                "n_a": self.n_a, "n_b": self.n_b}


def tau_b(means_a: np.ndarray, means_b: np.ndarray) -> float:
    """Kendall τ_b of two score vectors (ties in either count as ties); NaN when one is constant (no ranking)."""
    if np.ptp(means_a) == 0 or np.ptp(means_b) == 0:
        return float("nan")
    return float(kendalltau(means_a, means_b, variant="b").statistic)


def _spread(draws: list[float]) -> tuple[float, float, float]:
    """Mean, 2.5 % and 97.5 % of the draws that rank anything (NaN when none does)."""
    finite = np.asarray([d for d in draws if d == d])
    if finite.size == 0:
        return float("nan"), float("nan"), float("nan")
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(finite.mean()), float(low), float(high)


def agreement(scores_a: np.ndarray, scores_b: np.ndarray, n_resamples: int = DEFAULT_RESAMPLES,
              seed: int = DEFAULT_SEED) -> Agreement:
    """τ_b of the rankings the two sets give, with a percentile bootstrap interval (each set's
    questions resampled on their own)."""
    rng = np.random.default_rng(seed)
    point = tau_b(scores_a.mean(axis=1), scores_b.mean(axis=1))
    draws = []
    for _ in range(n_resamples):
        a = scores_a[:, rng.integers(0, scores_a.shape[1], scores_a.shape[1])].mean(axis=1)
        b = scores_b[:, rng.integers(0, scores_b.shape[1], scores_b.shape[1])].mean(axis=1)
        draws.append(tau_b(a, b))
    _, low, high = _spread(draws)
    return Agreement(point, low, high, scores_a.shape[1], scores_b.shape[1])


def split_half(scores: np.ndarray, n: int, repeats: int = 200, seed: int = DEFAULT_SEED) -> Agreement:
    """τ_b between the rankings of two disjoint random halves of ``n`` questions each (fewer when the
    set has under ``2n``): the mean over ``repeats`` draws and its 2.5–97.5 % spread."""
    rng = np.random.default_rng(seed)
    size = min(n, scores.shape[1] // 2)
    draws = []
    for _ in range(repeats):
        order = rng.permutation(scores.shape[1])
        draws.append(tau_b(scores[:, order[:size]].mean(axis=1), scores[:, order[size:2 * size]].mean(axis=1)))
    mean, low, high = _spread(draws)
    return Agreement(mean, low, high, size, size)
