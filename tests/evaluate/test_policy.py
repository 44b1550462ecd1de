"""The lab's one comparison policy: exact values on small cases, size on the skewed and discrete
shapes rank metrics produce, power on a plain shift, NaN and rounding handled, one family per command."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rag_lab.evaluate.statistics import policy
from rag_lab.evaluate.statistics.significance import (compare_to_baseline, empirical_likelihood_many, holm,
                                                      paired_test)

ALPHA_19 = 0.05 / 19  # the first Holm step over the default grid's 19-comparison marked set


def _enumerated_sign_flip(d) -> float:
    d = [x for x in d if x != 0]
    observed = abs(sum(d))
    sums = [abs(sum(s * x for s, x in zip(signs, d))) for signs in itertools.product((1, -1), repeat=len(d))]
    return sum(s >= observed - 1e-12 for s in sums) / len(sums)


def _el_by_root_finding(d) -> float:
    """Owen's statistic for one sample, solved independently with scipy's brentq."""
    from scipy.optimize import brentq
    from scipy.stats import chi2

    d = np.asarray(d, dtype=float)
    lam = brentq(lambda t: np.sum(d / (1 + t * d)), -1 / d.max() + 1e-10, -1 / d.min() - 1e-10, xtol=1e-14)
    return float(chi2.sf(2 * np.sum(np.log1p(lam * d)), 1))


def test_exact_small_cases():
    # a 4-question constant shift: 2 of 16 sign assignments reach it
    assert policy.decide_pair([0.2] * 4, [0.3] * 4)[:2] == (0.125, "sign-flip exact")
    d = [0.5, 0.3, -0.1, 0.2, 0.4, 0.0, -0.25]
    p, decided, dropped = policy.decide_pair(np.zeros(7), d)
    flip, likelihood = _enumerated_sign_flip(d), _el_by_root_finding([x for x in d if x != 0])
    assert p == pytest.approx(max(flip, likelihood)) and dropped == 0
    assert decided == ("sign-flip exact" if flip >= likelihood else "empirical likelihood")
    assert policy.decide_pair([0.1, 0.2], [0.1, 0.2])[:2] == (1.0, "identical")


def test_empirical_likelihood_matches_an_independent_solution():
    rng = np.random.default_rng(0)
    rows = rng.normal(0.05, 0.3, size=(5, 40))
    ours = empirical_likelihood_many(rows)
    assert ours == pytest.approx([_el_by_root_finding(r) for r in rows], rel=1e-6)
    assert empirical_likelihood_many(np.array([[0.1, 0.2, 0.3]]))[0] == 0.0  # 0 outside the hull
    assert empirical_likelihood_many(np.zeros((1, 5)))[0] == 1.0


def _skewed(rng, rows: int, n: int, losses: float) -> np.ndarray:
    """Equal-mean differences: many −0.369 (rank 1 → 2), a few +1 (a miss → rank 1)."""
    u = rng.random((rows, n))
    return np.where(u < losses, -0.369, np.where(u < losses * 1.369, 1.0, 0.0))


def test_size_holds_on_skewed_equal_mean_differences_where_t_does_not():
    from scipy.stats import ttest_1samp

    d = _skewed(np.random.default_rng(7), 3000, 240, 0.1)
    p, _ = policy.decide(np.zeros_like(d), d)
    ours = float((p < ALPHA_19).mean())
    student = float((ttest_1samp(d, 0.0, axis=1).pvalue < ALPHA_19).mean())
    assert ours <= ALPHA_19 * 1.4  # ≤ nominal within simulation error (SE ≈ 0.0009)
    assert student >= 2 * ours and student > ALPHA_19 * 1.6  # the t-test's excess this replaces


def test_size_holds_on_discrete_tied_rank_differences():
    rng = np.random.default_rng(11)
    ranks = rng.geometric(0.6, size=(2, 2000, 150))
    ndcg = np.where(ranks <= 10, 1 / np.log2(1 + ranks), 0.0)
    moved = rng.random((2000, 150)) < 0.15  # exchangeable: the two systems differ on 15 % of questions
    a, b = ndcg[0], np.where(moved, ndcg[1], ndcg[0])
    p, decided = policy.decide(a, b)
    assert float((p < 0.05).mean()) <= 0.05 + 0.01 and float((p < ALPHA_19).mean()) <= ALPHA_19 + 0.002
    assert {"sign-flip", "empirical likelihood"} & set(decided)


def test_power_on_a_plain_shift_is_close_to_the_t_test():
    from scipy.stats import ttest_1samp

    rng = np.random.default_rng(5)
    d = 0.06 + 0.23 * rng.standard_normal((600, 240))
    p, _ = policy.decide(np.zeros_like(d), d)
    ours = float((p < ALPHA_19).mean())
    student = float((ttest_1samp(d, 0.0, axis=1).pvalue < ALPHA_19).mean())
    assert ours >= 0.78 and ours >= student - 0.04


def test_nan_in_is_nan_out_or_dropped_and_counted():
    assert np.isnan(paired_test([0.1, np.nan] + [0.2] * 20, [0.3] * 22)[0])
    assert paired_test([0.1, np.nan] + [0.2] * 20, [0.3] * 22)[1] == "undefined (NaN score)"
    p, _, dropped = policy.decide_pair([0.1, np.nan, 0.3, 0.5], [0.2, 0.5, 0.1, 0.6])
    assert dropped == 1 and p == pytest.approx(max(_enumerated_sign_flip([0.1, -0.2, 0.1]),
                                                   _el_by_root_finding([0.1, -0.2, 0.1])))
    ids = [f"q{i}" for i in range(20)]
    rng = np.random.default_rng(1)
    base = rng.random(20)
    other = base + 0.05 + rng.normal(0, 0.01, 20)
    other[3] = np.nan
    frame = compare_to_baseline({"b": {"m": dict(zip(ids, base))}, "x": {"m": dict(zip(ids, other))}}, "b")
    assert (frame["n_dropped"] == 1).all() and (frame["n_queries"] == 19).all()
    assert frame["p_value"].between(0, 1).all() and frame["p_value"].gt(0).all()


def test_float_rounding_is_not_a_difference():
    a = np.linspace(0.1, 0.9, 20)
    assert paired_test(a, a + 5.6e-17) == (1.0, "identical")
    assert policy.decide_pair(a, a + 5.6e-17)[:2] == (1.0, "identical")
    b = a.copy()
    b[:3] += 0.2
    b[3:] += 5.6e-17  # rounding on the other 17 questions: 3 real changes, decided exactly
    assert paired_test(a, b) == (pytest.approx(2 / 8), "sign-flip exact")


def test_one_correction_over_several_tables():
    import pandas as pd

    first = pd.DataFrame({"marked_set": [True, True, False], "p_decision": [0.004, 0.026, 0.001]})
    second = pd.DataFrame({"marked_set": [True, False], "p_decision": [0.03, np.nan]})
    assert policy.correct_jointly([first, second]) == 3
    expected = holm([0.004, 0.026, 0.03])  # 0.012, 0.052, 0.052
    assert first["p_adjusted"].tolist()[:2] == pytest.approx(expected[:2]) and np.isnan(first["p_adjusted"][2])
    assert second["p_adjusted"][0] == pytest.approx(expected[2])
    # alone, each table's rows would all pass at 0.05 after Holm; in one family only the first does
    assert first["significant"].tolist() == [True, False, False] and second["significant"].tolist() == [False, False]
    alone = pd.DataFrame({"marked_set": [True], "p_decision": [0.03]})
    policy.correct_jointly([alone])
    assert alone["significant"].tolist() == [True]
