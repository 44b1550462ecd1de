"""Which differences are real: paired significance tests, Holm correction, bootstrap CIs.

- ``compare_to_baseline``: every system (a configuration or a mode) against one baseline, per
  metric, on paired per-query scores, with the two tests ranx offers — two-sided paired
  Student's t (ranx's) and Fisher's randomization test (ranx's definition, seeded numpy; see
  :func:`fisher_randomization`) — and Holm's step-down correction over the whole family of
  comparisons of one test (systems × metrics).
- ``paired_p_value(..., "wilcoxon")``: the Wilcoxon signed-rank test (scipy; zero differences
  dropped), analytic like Student's t, so its p-value can go as low as the data allow — a
  randomization test with N permutations cannot go below 1/(N + 1).
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

    adjusted = pd.Series(np.nan, index=frame.index, dtype=float)
    for _, group in frame[frame[family].notna()].groupby(family, sort=False):
        adjusted.loc[group.index] = holm(group[p_column].tolist())
    return adjusted


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
    observed = abs(d.sum())
    signs = np.random.default_rng(seed).integers(0, 2, size=(n_permutations, d.size), dtype=np.int8) * 2 - 1
    permuted = np.abs(signs @ d)
    hits = int(np.count_nonzero(permuted >= observed - 1e-12 * max(1.0, observed)))
    return (hits + 1) / (n_permutations + 1)


def paired_p_value(control: Sequence[float], treatment: Sequence[float], test: str = "fisher",
                   n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED) -> float:
    """Two-sided p-value of a paired test: ``student`` (ranx's paired Student's t), ``fisher``
    (the randomization test, seeded) or ``wilcoxon`` (scipy's signed-rank test, zero differences
    dropped). Identical score vectors give exactly 1.0."""
    a = np.ascontiguousarray(control, dtype=np.float64)
    b = np.ascontiguousarray(treatment, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired tests need the same queries: {a.shape} vs {b.shape} scores")
    if test not in KNOWN_TESTS:
        raise ValueError(f"unknown statistical test {test!r}: use one of {', '.join(KNOWN_TESTS)}")
    if a.size < 2 or np.array_equal(a, b):
        return 1.0
    if test == "fisher":
        return fisher_randomization(a, b, n_permutations, seed)
    d = b - a
    if test == "wilcoxon":
        from scipy.stats import wilcoxon

        return float(wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)
    if np.allclose(d, d[0], rtol=0.0, atol=1e-12):  # a constant non-zero shift: t is infinite, the difference certain
        return 0.0
    from ranx.statistical_tests import paired_student_t_test

    p, _ = paired_student_t_test(a, b, 0.05)
    return float(p)


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
    significant (``p_holm < alpha``), n_queries. Pairs are matched by query id (only queries both
    systems scored). The Holm family is every (system, metric) of one test.
    """
    import pandas as pd

    if baseline not in per_query:
        raise ValueError(f"baseline {baseline!r} is not among the systems: {', '.join(list(per_query)[:10])}")
    rows = []
    memo: dict[tuple, float] = {}  # grids repeat the same score vectors: test each pair once
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
            for test in tests:
                key = (test, a.tobytes(), b.tobytes())
                if key not in memo:
                    memo[key] = paired_p_value(a, b, test, n_permutations, seed)
                rows.append({
                    "system": system, "metric": metric, "test": test, "baseline": baseline,
                    "mean": float(b.mean()) if b.size else float("nan"),
                    "baseline_mean": float(a.mean()) if a.size else float("nan"),
                    "delta": float((b - a).mean()) if a.size else float("nan"),
                    "p_value": memo[key], "n_queries": len(queries),
                })
    frame = pd.DataFrame(rows, columns=["system", "metric", "test", "baseline", "mean", "baseline_mean",
                                        "delta", "p_value", "n_queries"])
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
