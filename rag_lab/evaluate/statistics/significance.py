"""Which differences are real: paired significance tests, Holm correction, bootstrap CIs.

- ``compare_to_baseline``: every system (a configuration or a mode) against one baseline, per
  metric, on paired per-query scores, with the two tests ranx offers — two-sided paired
  Student's t (ranx's) and Fisher's randomization test (ranx's definition, seeded numpy; see
  :func:`fisher_randomization`) — and Holm's step-down correction over the whole family of
  comparisons of one test (systems × metrics).
- ``paired_p_value(..., "wilcoxon")``: the Wilcoxon signed-rank test (scipy; zero differences
  dropped), analytic like Student's t, so its p-value can go as low as the data allow — a
  randomization test with N permutations cannot go below 1/(N + 1).
- ``paired_test``: the p-value and the test that decided it. No test speaks where its statistic is
  undefined or its approximation unfounded: at most 16 non-zero differences (tiny folders, sparse
  changes, all ties) or a constant non-zero difference get the exact sign-flip p
  (:func:`sign_flip_exact`, ≥ 2/2^n, never 0); ``paired_tests_many`` does the same for many pairs
  in one scipy call.
- ``holm_within``: Holm's correction run separately inside each family of a tidy frame (the
  ablation grid corrects within the question a table answers, e.g. "does k matter?").
- ``bootstrap_ci``: a seeded percentile bootstrap 95 % interval of a mean (per-sample scores, NaN
  dropped and counted — never averaged away).

Everything is seeded: the same inputs give the same p-values and intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

STAT_TESTS = ("student", "fisher")
# Every test paired_p_value knows; the analytic ones (no permutation floor) are student and wilcoxon.
KNOWN_TESTS = STAT_TESTS + ("wilcoxon",)
DEFAULT_ALPHA = 0.05
DEFAULT_SEED = 42
DEFAULT_PERMUTATIONS = 2000
DEFAULT_RESAMPLES = 2000


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (same order as given; NaN stays NaN and is not counted)."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = len(valid)
    running = 0.0
    for position, index in enumerate(valid[np.argsort(p[valid], kind="stable")]):
        running = max(running, min(1.0, (m - position) * p[index]))
        adjusted[index] = running
    return adjusted.tolist()


def holm_within(frame: "pandas.DataFrame", family: str, p_column: str) -> "pandas.Series":  # noqa: F821
    """Holm-adjusted ``p_column`` computed separately within each value of the ``family`` column
    (rows whose family is missing are left NaN): one correction per question asked, not one over
    everything a run happens to compute."""
    import pandas as pd

    p = frame[p_column].to_numpy(dtype=float)
    adjusted = np.full(len(frame), np.nan)
    for positions in frame.groupby(family, sort=False).indices.values():  # NaN families are left out
        adjusted[positions] = holm(p[positions].tolist())
    return pd.Series(adjusted, index=frame.index, dtype=float)


def fisher_randomization(control: np.ndarray, treatment: np.ndarray, n_permutations: int = DEFAULT_PERMUTATIONS,
                         seed: int = DEFAULT_SEED) -> float:
    """Two-sided paired Fisher randomization test (Smucker et al., CIKM 2007), as ranx defines it:
    under the null each query's two scores are exchangeable, so each permutation swaps them per
    query at random (= flips the sign of that query's difference) and p is the share of
    permutations whose |mean difference| reaches the observed one — counting the observed
    arrangement itself, ``(hits + 1) / (n + 1)`` (Phipson & Smyth 2010), so p is never 0: with 2,000
    permutations nothing is resolved below 1/2001, and after Holm over a large grid a difference no
    permutation reached is not "p < 0.001" (ranx reports ``hits / n``; the two differ by < 1/n).

    Computed here with a seeded numpy Generator because ranx's numba-parallel implementation seeds
    only the calling thread: the same inputs and seed give different p-values from call to call
    (0.77–0.83 measured on one pair), which would make a report's significance marks unstable.
    """
    d = np.asarray(treatment, dtype=float) - np.asarray(control, dtype=float)
    return float(sign_flip_many(d[None, :], n_permutations, seed)[0])


_RANDOM_SIGNS: dict[tuple[int, int, int], np.ndarray] = {}


def _random_signs(n: int, n_permutations: int, seed: int) -> np.ndarray:
    """(permutations, n) seeded ±1 signs as floats, memoised (a grid tests many pairs of one length)."""
    key = (n, n_permutations, seed)
    if key not in _RANDOM_SIGNS:
        if len(_RANDOM_SIGNS) > 8:
            _RANDOM_SIGNS.clear()
        draws = np.random.default_rng(seed).integers(0, 2, size=(n_permutations, n), dtype=np.int8) * 2 - 1
        _RANDOM_SIGNS[key] = draws.astype(np.float64)
    return _RANDOM_SIGNS[key]


def sign_flip_many(differences: np.ndarray, n_permutations: int = DEFAULT_PERMUTATIONS,
                   seed: int = DEFAULT_SEED, enough_hits: int | None = None) -> np.ndarray:
    """:func:`fisher_randomization` of every row of a (pairs, queries) matrix of paired differences
    at once: one seeded set of sign flips serves every row (each row's p is valid on its own, which
    is all Holm needs), ``(hits + 1) / (permutations + 1)`` per row, in blocks of one matrix product.

    ``enough_hits``: Besag & Clifford's (1991) sequential p-value — a row stops at the flip L that
    brings its ``enough_hits``-th hit, p = enough_hits / L (a valid p-value); rows that never get
    there use every flip as above. Rows far from significance then cost a few hundred flips."""
    d = np.atleast_2d(np.asarray(differences, dtype=float))
    signs = _random_signs(d.shape[1], n_permutations, seed)
    observed = np.abs(d.sum(axis=1))
    reach = observed - 1e-12 * np.maximum(1.0, observed)
    if enough_hits is not None:
        return _sequential_sign_flip(d, signs, reach, enough_hits)
    hits = np.zeros(len(d), dtype=np.int64)
    block = max(1, 4_000_000 // max(1, n_permutations))
    for start in range(0, len(d), block):
        permuted = np.abs(d[start:start + block] @ signs.T)
        hits[start:start + block] = np.count_nonzero(permuted >= reach[start:start + block, None], axis=1)
    return (hits + 1) / (n_permutations + 1)


def _sequential_sign_flip(d: np.ndarray, signs: np.ndarray, reach: np.ndarray, enough_hits: int,
                          block: int = 500) -> np.ndarray:
    p = np.full(len(d), np.nan)
    hits = np.zeros(len(d), dtype=np.int64)
    active = np.arange(len(d))
    for start in range(0, len(signs), block):
        if not active.size:
            break
        hit = np.abs(d[active] @ signs[start:start + block].T) >= reach[active, None]
        running = hits[active, None] + np.cumsum(hit, axis=1)
        done = running[:, -1] >= enough_hits
        stopped_at = start + np.argmax(running[done] >= enough_hits, axis=1) + 1
        p[active[done]] = enough_hits / stopped_at
        hits[active] = running[:, -1]
        active = active[~done]
    p[active] = (hits[active] + 1) / (len(signs) + 1)
    return p


def empirical_likelihood_many(differences: np.ndarray) -> np.ndarray:
    """Owen's empirical-likelihood ratio test of "mean difference = 0" for every row of a (pairs,
    queries) matrix, two-sided, χ²(1) calibration (Owen 1988). Unlike Student's t it measures the
    spread *under the null* (the reweighting of the questions that moves the mean to 0), so a
    skewed difference — many small losses and a few large gains of equal mean — does not fatten
    its tail. The Lagrange multiplier is found by bisection (the score Σ d/(1 + λd) falls
    monotonically in λ), all rows at once. All-zero rows → 1.0; rows whose differences share one
    sign (0 outside their convex hull) → 0.0: those are left to the sign-flip test."""
    d = np.atleast_2d(np.asarray(differences, dtype=float))
    low, high = d.min(axis=1), d.max(axis=1)
    p = np.where((d == 0.0).all(axis=1), 1.0, 0.0)
    rows = np.flatnonzero((low < 0.0) & (high > 0.0))
    if rows.size:
        from scipy.stats import chi2

        x = d[rows]
        lower, upper = -1.0 / high[rows], -1.0 / low[rows]  # keeps 1 + λd > 0 for every d
        for _ in range(80):  # halves the bracket each time: 80 steps leave it at float precision
            middle = (lower + upper) / 2.0
            rising = (x / (1.0 + middle[:, None] * x)).sum(axis=1) > 0.0
            lower, upper = np.where(rising, middle, lower), np.where(rising, upper, middle)
        multiplier = (lower + upper) / 2.0
        statistic = 2.0 * np.log1p(multiplier[:, None] * x).sum(axis=1)
        p[rows] = chi2.sf(np.maximum(statistic, 0.0), 1)
    return p


ZERO_TOLERANCE = 1e-12  # relative to the scores' scale: smaller differences are float rounding


def paired_differences(control, treatment) -> np.ndarray:
    """treatment − control, with differences of float-rounding size (≤ 1e-12 of the scores'
    scale, e.g. 5.6e-17 between two sums of the same numbers) set to exactly 0: rounding is not a
    change. Works on vectors and on (pairs, queries) matrices."""
    a, b = np.asarray(control, dtype=float), np.asarray(treatment, dtype=float)
    d = b - a
    scale = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return np.where(np.abs(d) <= ZERO_TOLERANCE * scale, 0.0, d)


EXACT_MAX_N = 16  # up to this many non-zero differences the sign-flip distribution is enumerated (2^16 sums)
_SIGN_TABLES: dict[int, np.ndarray] = {}


def _signs(n: int) -> np.ndarray:
    """Every ±1 sign vector of length n, (2^n, n) int8, memoised."""
    if n not in _SIGN_TABLES:
        bits = (np.arange(2 ** n, dtype=np.int64)[:, None] >> np.arange(n)) & 1
        _SIGN_TABLES[n] = (bits * 2 - 1).astype(np.int8)
    return _SIGN_TABLES[n]


def sign_flip_exact(differences: Sequence[float]) -> float:
    """Exact two-sided sign-flip (Fisher randomization) p-value of paired differences: the share of
    all 2^n sign assignments whose |sum| reaches the observed |sum|, the observed one included, so
    p ≥ 2/2^n and never 0. Zero differences add nothing to any sum and are dropped first; none left
    (all ties) → 1.0, which is exact, not a fallback. Enumerated up to :data:`EXACT_MAX_N` non-zero
    differences; beyond that only the constant case is closed-form (2 of 2^n reach it)."""
    d = paired_differences(np.zeros(len(differences)), differences)
    d = d[d != 0.0]
    n = d.size
    if n == 0:
        return 1.0
    observed = abs(d.sum())
    tolerance = 1e-12 * max(1.0, float(np.abs(d).sum()))
    if n > EXACT_MAX_N:
        if np.allclose(d, d[0], rtol=0.0, atol=1e-12):
            return float(2.0 ** (1 - n))
        raise ValueError(f"exact enumeration is limited to {EXACT_MAX_N} non-zero differences, got {n}")
    sums = np.abs(_signs(n) @ d)
    return float(np.count_nonzero(sums >= observed - tolerance) / sums.size)


def paired_test(control: Sequence[float], treatment: Sequence[float], test: str = "student",
                n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED) -> tuple[float, str]:
    """(two-sided p, the test that decided it). A test whose statistic is undefined or whose
    approximation is unfounded never speaks: a NaN score → NaN ("undefined (NaN score)": drop the
    pair first if it should count); identical scores, up to float rounding → 1.0 ("identical"); at most
    :data:`EXACT_MAX_N` non-zero differences (n < 6, sparse changes, all ties) or a constant
    non-zero difference (Student's t infinite) → the exact sign-flip p ("sign-flip exact");
    otherwise ``student`` (scipy's paired t, = ranx's), ``wilcoxon`` (scipy's signed rank, zero
    differences dropped) or ``fisher`` (seeded randomization, :func:`fisher_randomization`)."""
    a = np.ascontiguousarray(control, dtype=np.float64)
    b = np.ascontiguousarray(treatment, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired tests need the same queries: {a.shape} vs {b.shape} scores")
    if test not in KNOWN_TESTS:
        raise ValueError(f"unknown statistical test {test!r}: use one of {', '.join(KNOWN_TESTS)}")
    if np.isnan(a).any() or np.isnan(b).any():  # an unscored question has no difference to test
        return float("nan"), "undefined (NaN score)"
    d = paired_differences(a, b)
    nonzero = d[d != 0.0]
    if nonzero.size == 0:
        return 1.0, "identical"
    if nonzero.size <= EXACT_MAX_N or np.allclose(nonzero, nonzero[0], rtol=0.0, atol=1e-12):
        return sign_flip_exact(nonzero), "sign-flip exact"
    if test == "fisher":
        return fisher_randomization(a, b, n_permutations, seed), "fisher"
    if test == "wilcoxon":
        from scipy.stats import wilcoxon

        return float(wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue), "wilcoxon"
    from scipy.stats import ttest_rel

    return float(ttest_rel(b, a).pvalue), "student"


def paired_p_value(control: Sequence[float], treatment: Sequence[float], test: str = "fisher",
                   n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED) -> float:
    """Two-sided p-value of :func:`paired_test` (which also says which test decided)."""
    return paired_test(control, treatment, test, n_permutations, seed)[0]


def paired_tests_many(control: np.ndarray, treatment: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """:func:`paired_test` for many complete pairs at once: rows of two (pairs, queries) matrices →
    (Student's t p, Wilcoxon p, decided_by) per row. scipy's ``ttest_rel`` runs over all rows in
    one call; rows it cannot speak for (identical, few or constant non-zero differences) get the
    exact sign-flip p in both columns; Wilcoxon (the check test) likewise in one vectorised call
    (scipy drops each row's own zero differences, as one call per row would)."""
    from scipy.stats import ttest_rel, wilcoxon

    a, b = np.asarray(control, dtype=float), np.asarray(treatment, dtype=float)
    d = paired_differences(a, b)
    nonzero = np.count_nonzero(d, axis=1)
    # constant among the non-zero differences, as paired_test decides (zero differences are dropped there)
    spread = (np.where(d != 0, d, -np.inf).max(axis=1, initial=-np.inf)
              - np.where(d != 0, d, np.inf).min(axis=1, initial=np.inf))
    constant = (nonzero > 0) & (spread <= 1e-12)
    exact = (nonzero <= EXACT_MAX_N) | constant
    p_t, p_w = np.full(len(d), np.nan), np.full(len(d), np.nan)
    decided = np.where(nonzero == 0, "identical", np.where(exact, "sign-flip exact", "student")).tolist()
    for i in np.flatnonzero(exact):
        p_t[i] = p_w[i] = sign_flip_exact(d[i])
    rest = np.flatnonzero(~exact)
    if rest.size:
        p_t[rest] = ttest_rel(a[rest] + d[rest], a[rest], axis=1).pvalue
        p_w[rest] = wilcoxon(d[rest], axis=1, zero_method="wilcox", alternative="two-sided").pvalue
    return p_t, p_w, decided


def paired_scores(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], baseline: str):
    """(system, metric, baseline scores, scores, pairs dropped) for every other system and metric
    both scored, matched by query id; a pair with a NaN score is no evidence either way: dropped
    and counted."""
    if baseline not in per_query:
        raise ValueError(f"baseline {baseline!r} is not among the systems: {', '.join(list(per_query)[:10])}")
    for system, metrics in per_query.items():
        if system == baseline:
            continue
        for metric, scores in metrics.items():
            base_scores = per_query[baseline].get(metric)
            if base_scores is None:
                continue
            queries = sorted(set(scores) & set(base_scores))
            a = np.array([base_scores[q] for q in queries], dtype=float)
            b = np.array([scores[q] for q in queries], dtype=float)
            scored = ~(np.isnan(a) | np.isnan(b))
            yield system, metric, a[scored], b[scored], int((~scored).sum())


def compare_to_baseline(
    per_query: Mapping[str, Mapping[str, Mapping[str, float]]],
    baseline: str,
    tests: Sequence[str] = STAT_TESTS,
    alpha: float = DEFAULT_ALPHA,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> "pandas.DataFrame":  # noqa: F821
    """``per_query[system][metric][query_id] → score`` → one row per system × metric × test.

    Columns: system, metric, test, baseline, mean, baseline_mean, delta, p_value, p_holm,
    significant (``p_holm < alpha``), n_queries, n_dropped. Pairs are matched by query id (only
    queries both systems scored); a pair with a NaN score is dropped and counted in ``n_dropped``
    (never tested as if it were a difference). The Holm family is every (system, metric) of one test.
    """
    import pandas as pd

    rows = []
    memo: dict[tuple, float] = {}  # grids repeat the same score vectors: test each pair once
    for system, metric, a, b, dropped in paired_scores(per_query, baseline):
        for test in tests:
            key = (test, a.tobytes(), b.tobytes())
            if key not in memo:
                memo[key] = paired_p_value(a, b, test, n_permutations, seed)
            rows.append({
                "system": system, "metric": metric, "test": test, "baseline": baseline,
                "mean": float(b.mean()) if b.size else float("nan"),
                "baseline_mean": float(a.mean()) if a.size else float("nan"),
                "delta": float((b - a).mean()) if a.size else float("nan"),
                "p_value": memo[key], "n_queries": int(a.size), "n_dropped": dropped,
            })
    frame = pd.DataFrame(rows, columns=["system", "metric", "test", "baseline", "mean", "baseline_mean",
                                        "delta", "p_value", "n_queries", "n_dropped"])
    frame["p_holm"] = np.nan
    for test in frame["test"].unique():
        mask = frame["test"] == test
        frame.loc[mask, "p_holm"] = holm(frame.loc[mask, "p_value"].tolist())
    frame["significant"] = frame["p_holm"] < alpha
    return frame


def bootstrap_ci(values: Sequence[float], confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = DEFAULT_SEED) -> dict[str, float]:
    """Mean and seeded percentile-bootstrap interval. NaNs are dropped and counted in ``n_nan``."""
    x = np.asarray(values, dtype=float)
    n_nan = int(np.isnan(x).sum())
    x = x[~np.isnan(x)]
    if x.size == 0:
        return {"mean": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": 0, "n_nan": n_nan}
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n_resamples, x.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return {"mean": float(x.mean()), "ci_low": float(low), "ci_high": float(high), "n": int(x.size), "n_nan": n_nan}


def bootstrap_frame(samples: "pandas.DataFrame", by: Sequence[str], value: str = "score",  # noqa: F821
                    confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                    seed: int = DEFAULT_SEED) -> "pandas.DataFrame":  # noqa: F821
    """Tidy per-sample scores → one row per group with mean, ci_low, ci_high, n, n_nan."""
    import pandas as pd

    rows = []
    for key, group in samples.groupby(list(by), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), **bootstrap_ci(group[value].to_numpy(), confidence, n_resamples, seed)})
    return pd.DataFrame(rows)


def bootstrap_matrix(scores: "np.ndarray", confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                     seed: int = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means and seeded percentile-bootstrap intervals of many systems scored on the same queries.

    ``scores``: (systems, queries) without NaN. One set of resamples (query multiplicities drawn
    once, seeded) serves every row, so a whole ablation grid is one matrix product.
    Returns (mean, ci_low, ci_high), each of shape (systems,).
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim != 2:
        raise ValueError("scores must be a (systems, queries) matrix")
    if np.isnan(x).any():
        raise ValueError("bootstrap_matrix needs complete scores; use bootstrap_ci for rows with NaN")
    n_systems, n = x.shape
    if n == 0:
        nan = np.full(n_systems, np.nan)
        return nan, nan.copy(), nan.copy()
    rng = np.random.default_rng(seed)
    counts = np.zeros((n_resamples, n))
    draws = rng.integers(0, n, size=(n_resamples, n))
    np.add.at(counts, (np.repeat(np.arange(n_resamples), n), draws.ravel()), 1.0)
    means = x @ counts.T / n  # (systems, resamples)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=1)
    return x.mean(axis=1), low, high
