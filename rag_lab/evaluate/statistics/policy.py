"""The lab's one comparison policy: which paired test decides, which correction, what "significant" means.

Every verdict the lab prints — the ablation grid's marks, the ``ablate --contextual`` axis, tune's
confirmation on the rest split, the mode comparison of ``ir`` / ``eval`` reports and the contextual
retrieval comparison — comes from here:

- **the decision test** (:func:`decide`): two-sided and paired, on per-question differences with
  float rounding set to 0 (:func:`~.significance.paired_differences`). p is the larger of
  (a) the sign-flip randomization test — exact over all 2^n sign flips when at most 16 differences
  are non-zero, otherwise up to 10,000 seeded flips, ``(hits + 1) / (flips + 1)``, stopping early
  at the 20th hit (Besag & Clifford's sequential p, 20 / flips used) — and (b) Owen's
  empirical-likelihood test of "mean difference = 0". (a) is exact when the two systems are
  exchangeable per question, whatever the shape of the scores (ties, sparse changes, tiny folders);
  (b) keeps its size when they are not exchangeable but have equal means with a skewed difference
  (many −0.369 for a rank 1 → 2 move, a few +1 for a miss → rank 1), where Student's t and (a)
  reject 2–5 times too often at a Holm threshold (``benchmarks/grid_significance.py``). The larger
  of two p-values is valid when either is, and costs little power on symmetric differences.
- **the correction**: Holm over everything one command can mark (:func:`adjust`), so the
  family-wise error rate over every mark one command prints is ≤ α;
- **significant** = in that family and Holm-adjusted p < α (:func:`is_significant`).

Student's t, Wilcoxon and per-family Holm p-values are still computed beside it as an exploratory
view: shown for orientation, never called significant.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rag_lab.evaluate.statistics.significance import (DEFAULT_ALPHA, DEFAULT_SEED, EXACT_MAX_N,
                                                      empirical_likelihood_many, holm, paired_differences,
                                                      paired_scores, sign_flip_exact, sign_flip_many)

ALPHA = DEFAULT_ALPHA
FLIPS = 10_000
ENOUGH_HITS = 20  # Besag–Clifford stop: p well above any threshold needs no 10,000 flips
CORRECTION = "Holm"
ERROR_RATE = "family-wise error rate"
TEST_NAME = "sign-flip ∨ empirical likelihood"
TEST_TEXT = ("two-sided paired test: the larger p of the sign-flip randomization test (exact up to "
             f"{EXACT_MAX_N} non-zero differences, else {FLIPS:,} seeded flips) and Owen's empirical-likelihood "
             "test of mean difference 0 (column decided_by says which was larger)")


def decide(control, treatment, seed: int = DEFAULT_SEED) -> tuple[np.ndarray, list[str]]:
    """(p, decided_by) of the decision test for each row of two (pairs, questions) score matrices
    (complete: drop unscored questions first, :func:`decide_pair` does). ``decided_by``:
    ``identical`` (p = 1), ``sign-flip exact``, ``sign-flip`` or ``empirical likelihood`` — the
    test whose p was the larger."""
    d = np.atleast_2d(paired_differences(control, treatment))
    if np.isnan(d).any():
        raise ValueError("the decision test needs complete pairs: drop questions with a NaN score first")
    nonzero = np.count_nonzero(d, axis=1)
    spread = (np.where(d != 0, d, -np.inf).max(axis=1, initial=-np.inf)
              - np.where(d != 0, d, np.inf).min(axis=1, initial=np.inf))
    exact = (nonzero <= EXACT_MAX_N) | (spread <= 0.0)
    randomization = np.ones(len(d))
    for i in np.flatnonzero(exact & (nonzero > 0)):
        randomization[i] = sign_flip_exact(d[i])
    sampled = np.flatnonzero(~exact)
    if sampled.size:
        randomization[sampled] = sign_flip_many(d[sampled], FLIPS, seed, enough_hits=ENOUGH_HITS)
    likelihood = np.ones(len(d))
    tested = np.flatnonzero(nonzero > 0)
    likelihood[tested] = empirical_likelihood_many(d[tested])
    p = np.maximum(randomization, likelihood)
    decided = np.where(nonzero == 0, "identical",
                       np.where(likelihood > randomization, "empirical likelihood",
                                np.where(exact, "sign-flip exact", "sign-flip")))
    return p, decided.tolist()


def decide_pair(control, treatment, seed: int = DEFAULT_SEED) -> tuple[float, str, int]:
    """(p, decided_by, pairs dropped) for one pair of score vectors; questions where either score is
    NaN are dropped (and counted), none left → NaN."""
    a, b = np.asarray(control, dtype=float), np.asarray(treatment, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired tests need the same questions: {a.shape} vs {b.shape} scores")
    scored = ~(np.isnan(a) | np.isnan(b))
    dropped = int((~scored).sum())
    if not scored.any():
        return float("nan"), "no scored pair", dropped
    p, decided = decide(a[scored][None, :], b[scored][None, :], seed)
    return float(p[0]), decided[0], dropped


def adjust(p_values) -> np.ndarray:
    """Holm-adjusted p-values over one family (NaN stays NaN and does not count)."""
    return np.asarray(holm(list(np.asarray(p_values, dtype=float))), dtype=float)


def is_significant(p_adjusted, alpha: float = ALPHA) -> np.ndarray:
    return np.nan_to_num(np.asarray(p_adjusted, dtype=float), nan=1.0) < alpha


def family_text(size: int, what: str, alpha: float = ALPHA) -> str:
    """The one sentence a command prints about its marks."""
    return (f"significant = {ERROR_RATE} ≤ {alpha:g} over all {size} comparisons that can be marked ({what}), "
            f"{CORRECTION} over them together; decision test: {TEST_TEXT}")


def compare(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], baseline: str,
            alpha: float = ALPHA, seed: int = DEFAULT_SEED) -> "pandas.DataFrame":  # noqa: F821
    """``per_query[system][metric][question] → score``: every other system against ``baseline`` on
    each metric both scored, one family over all of them. Columns: system, metric, baseline, delta,
    p_value, decided_by, p_adjusted, significant, n_queries, n_dropped (pairs with a NaN score)."""
    import pandas as pd

    rows = []
    for system, metric, a, b, dropped in paired_scores(per_query, baseline):
        p, decided, _ = decide_pair(a, b, seed)
        rows.append({"system": system, "metric": metric, "baseline": baseline,
                     "delta": float((b - a).mean()) if a.size else float("nan"),
                     "p_value": p, "decided_by": decided, "n_queries": int(a.size), "n_dropped": dropped})
    frame = pd.DataFrame(rows, columns=["system", "metric", "baseline", "delta", "p_value", "decided_by",
                                        "n_queries", "n_dropped"])
    frame["p_adjusted"] = adjust(frame["p_value"]) if len(frame) else []
    frame["significant"] = is_significant(frame["p_adjusted"], alpha) if len(frame) else []
    return frame


def correct_jointly(tables: list["pandas.DataFrame"], alpha: float = ALPHA) -> int:  # noqa: F821
    """One correction over the marked rows (``marked_set``) of several tables — everything one
    command prints: Holm over their ``p_decision`` together, written back into each table's
    ``p_adjusted`` and ``significant``. Returns the family's size."""
    pieces = [(t, t.index[t["marked_set"].astype(bool)]) for t in tables if "marked_set" in t]
    p = np.concatenate([t.loc[rows, "p_decision"].to_numpy(dtype=float) for t, rows in pieces] or [np.array([])])
    adjusted = adjust(p) if p.size else p
    start = 0
    for table, rows in pieces:
        table["p_adjusted"] = np.nan
        table.loc[rows, "p_adjusted"] = adjusted[start:start + len(rows)]
        table["significant"] = (table["marked_set"].astype(bool) & is_significant(table["p_adjusted"], alpha))
        start += len(rows)
    return int(p.size)
