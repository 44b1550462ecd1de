"""Significance and CI code with known values: identical runs are never significant, a planted
difference is; Holm and the bootstrap match hand-computed numbers; everything is seeded."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.evaluate.statistics import significance as stats


def test_holm_known_values():
    # sorted: .005·4 = .02, .01·3 = .03, .03·2 = .06, .04·1 = .04 → monotone .06
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    adjusted = stats.holm([0.02, float("nan")])
    assert adjusted[0] == pytest.approx(0.02) and np.isnan(adjusted[1])  # NaN neither counted nor filled


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("test", stats.STAT_TESTS)
def test_identical_runs_are_never_significant(seed, test):
    scores = np.random.default_rng(seed).random(60)
    assert stats.paired_p_value(scores, scores.copy(), test) == 1.0


def test_identical_systems_in_a_comparison_are_not_significant():
    rng = np.random.default_rng(7)
    base = {f"q{i}": float(v) for i, v in enumerate(rng.random(40))}
    per_query = {"base": {"ndcg": base}, "same": {"ndcg": dict(base)}}
    frame = stats.compare_to_baseline(per_query, "base")
    assert set(frame["test"]) == {"student", "fisher"}
    assert (frame["p_value"] == 1.0).all() and not frame["significant"].any()


@pytest.mark.parametrize("test", stats.STAT_TESTS)
def test_a_planted_difference_is_significant(test):
    rng = np.random.default_rng(3)
    control = rng.random(100) * 0.5
    treatment = control + 0.15 + rng.normal(0, 0.05, 100)
    assert stats.paired_p_value(control, treatment, test) < 0.001


def test_noise_alone_is_not_significant_and_planted_survives_holm():
    rng = np.random.default_rng(11)
    base = rng.random(80)
    systems = {"base": {"m": {f"q{i}": v for i, v in enumerate(base)}}}
    # a system that only swaps scores between queries (same mean), and one with a real gain
    shuffled = base.copy()
    rng.shuffle(shuffled)
    systems["swapped"] = {"m": {f"q{i}": v for i, v in enumerate(shuffled)}}
    systems["better"] = {"m": {f"q{i}": min(1.0, v + 0.2) for i, v in enumerate(base)}}
    frame = stats.compare_to_baseline(systems, "base").set_index(["system", "test"])
    for test in stats.STAT_TESTS:
        assert not frame.loc[("swapped", test), "significant"]
        assert frame.loc[("better", test), "significant"]
        assert frame.loc[("better", test), "delta"] > 0.1


def test_fisher_is_seeded():
    rng = np.random.default_rng(5)
    a, b = rng.random(30), rng.random(30)
    assert stats.paired_p_value(a, b, "fisher", seed=1) == stats.paired_p_value(a, b, "fisher", seed=1)


def test_unpaired_inputs_and_unknown_tests_are_rejected():
    with pytest.raises(ValueError, match="same queries"):
        stats.paired_p_value([0.1, 0.2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="unknown statistical test"):
        stats.paired_p_value([0.1, 0.2], [0.3, 0.1], "mann-whitney")
    with pytest.raises(ValueError, match="baseline"):
        stats.compare_to_baseline({"a": {"m": {"q": 1.0}}}, "nope")


def test_bootstrap_ci_known_values():
    constant = stats.bootstrap_ci([0.4] * 50)
    assert constant == {"mean": pytest.approx(0.4), "ci_low": pytest.approx(0.4), "ci_high": pytest.approx(0.4), "n": 50, "n_nan": 0}
    normal = np.random.default_rng(0).normal(0.0, 1.0, 2000)
    ci = stats.bootstrap_ci(normal)
    # ±1.96·σ/√n ≈ ±0.0438 around the sample mean
    assert ci["ci_low"] < ci["mean"] < ci["ci_high"]
    assert (ci["ci_high"] - ci["ci_low"]) == pytest.approx(2 * 1.96 / np.sqrt(2000), rel=0.15)
    assert stats.bootstrap_ci(normal, seed=9) == stats.bootstrap_ci(normal, seed=9)


def test_bootstrap_counts_nan_and_never_averages_it():
    ci = stats.bootstrap_ci([1.0, float("nan"), 0.0, float("nan")])
    assert ci["n"] == 2 and ci["n_nan"] == 2 and ci["mean"] == 0.5
    empty = stats.bootstrap_ci([float("nan")])
    assert empty["n"] == 0 and np.isnan(empty["mean"])


def test_bootstrap_matrix_equals_per_row_bootstrap():
    rng = np.random.default_rng(2)
    matrix = rng.random((3, 25))
    mean, low, high = stats.bootstrap_matrix(matrix, seed=4)
    for row in range(3):
        ci = stats.bootstrap_ci(matrix[row], seed=4)
        assert (mean[row], low[row], high[row]) == pytest.approx((ci["mean"], ci["ci_low"], ci["ci_high"]))
    with pytest.raises(ValueError, match="complete"):
        stats.bootstrap_matrix([[0.1, float("nan")]])


def test_bootstrap_frame_groups():
    import pandas as pd

    frame = pd.DataFrame({"mode": ["a"] * 4 + ["b"] * 4, "score": [1, 1, 1, 1, 0, 0, 0, 0]})
    out = stats.bootstrap_frame(frame, ["mode"]).set_index("mode")
    assert out.loc["a", "mean"] == 1 and out.loc["b", "ci_high"] == 0


def test_a_permutation_p_value_is_never_zero():
    """No permutation reaches a huge planted difference: p is 1/(N+1), the test's resolution, and
    Holm over 500 such comparisons cannot push it below what 2,000 permutations can show."""
    control = np.linspace(0.0, 0.5, 50)
    treatment = control + 0.4 + np.linspace(-0.01, 0.01, 50)
    assert stats.paired_p_value(control, treatment, "fisher", n_permutations=2000) == 1 / 2001
    assert stats.holm([1 / 2001] * 500)[0] == pytest.approx(500 / 2001)


def test_fisher_matches_ranx_definition():
    from ranx.statistical_tests import fisher_randomization_test

    rng = np.random.default_rng(8)
    a = rng.random(60)
    b = a + rng.normal(0.03, 0.1, 60)
    ours = stats.paired_p_value(a, b, "fisher", n_permutations=4000)
    theirs = fisher_randomization_test(a, b, 4000, 0.05, 42)[0]
    assert ours == pytest.approx(theirs, abs=0.03)  # same test; ranx's parallel sampling is unseeded


def test_student_is_ranx_paired_t():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(9)
    a, b = rng.random(25), rng.random(25)
    assert stats.paired_p_value(a, b, "student") == pytest.approx(ttest_rel(a, b).pvalue)
    assert stats.paired_test(a, b, "student") == (pytest.approx(ttest_rel(a, b).pvalue), "student")


def _hand_sign_flip(d: list[float]) -> float:
    """Two-sided exact sign-flip p written out: every sign vector, |sum| ≥ the observed |sum|."""
    import itertools

    observed = abs(sum(d))
    sums = [abs(sum(s * x for s, x in zip(signs, d))) for signs in itertools.product((1, -1), repeat=len(d))]
    return sum(v >= observed - 1e-12 for v in sums) / len(sums)


@pytest.mark.parametrize("d", [[0.1] * 4, [0.3, 0.1, -0.05, 0.2, 0.4], [0.2, -0.2, 0.1], [0.5, 0.25, 0.125, 0.1, 0.05, 0.3, 0.2],
                               [0.1, 0.0, 0.0, 0.3, -0.1, 0.0]])
def test_exact_sign_flip_matches_a_hand_enumeration(d):
    assert stats.sign_flip_exact(d) == pytest.approx(_hand_sign_flip([x for x in d if x != 0]))


@pytest.mark.parametrize("test", stats.KNOWN_TESTS)
def test_no_degenerate_p_values(test):
    """A constant shift is not "certain": 4 questions that all move by 0.1 → 2/2^4 = 0.125 by every
    test (the exact sign-flip decides); 25 → 2/2^25, tiny but never 0; n < 6 → exact; all ties → 1."""
    a = np.array([0.2, 0.4, 0.6, 0.8])
    assert stats.paired_test(a, a + 0.1, test) == (pytest.approx(0.125), "sign-flip exact")
    b = np.random.default_rng(9).random(25)
    p, decided = stats.paired_test(b, b + 0.1, test)
    assert p == pytest.approx(2.0 ** -24) and p > 0 and decided == "sign-flip exact"
    p, decided = stats.paired_test(a, a + np.array([0.1, 0.2, -0.05, 0.3]), test)
    assert p == pytest.approx(_hand_sign_flip([0.1, 0.2, -0.05, 0.3])) and decided == "sign-flip exact"
    assert stats.paired_test(a, a.copy(), test) == (1.0, "identical")
    # sparse changes in a large sample: the exact test over the non-zero differences
    c = np.zeros(200)
    d = c.copy()
    d[:3] = 0.5
    p, decided = stats.paired_test(c, d, test)
    assert p == pytest.approx(0.25) and decided == "sign-flip exact"  # 2 of 8 sign vectors reach 1.5


def test_many_pairs_at_once_equal_one_by_one():
    rng = np.random.default_rng(2)
    a = rng.random((6, 40))
    b = a + rng.normal(0.02, 0.1, (6, 40))
    b[1] = a[1]  # identical
    b[2] = a[2] + 0.1  # constant shift
    b[3] = a[3]
    b[3, :5] += 0.2  # five changed questions
    p_t, p_w, decided = stats.paired_tests_many(a, b)
    for i in range(6):
        assert (p_t[i], decided[i]) == (pytest.approx(stats.paired_test(a[i], b[i], "student")[0]),
                                        stats.paired_test(a[i], b[i], "student")[1])
        assert p_w[i] == pytest.approx(stats.paired_test(a[i], b[i], "wilcoxon")[0])
    assert decided[:4] == ["student", "identical", "sign-flip exact", "sign-flip exact"]


def test_wilcoxon_is_scipys_signed_rank_and_can_go_below_any_permutation_floor():
    from scipy.stats import wilcoxon

    rng = np.random.default_rng(4)
    a = rng.random(300)
    b = a + 0.05 + rng.normal(0, 0.1, 300)
    assert stats.paired_p_value(a, b, "wilcoxon") == pytest.approx(wilcoxon(b - a).pvalue)
    assert stats.paired_p_value(a, b, "wilcoxon") < 1e-6 and stats.paired_p_value(a, b, "student") < 1e-6
    assert stats.paired_p_value(a, a.copy(), "wilcoxon") == 1.0


def test_holm_within_corrects_each_family_on_its_own():
    import pandas as pd

    frame = pd.DataFrame({"family": ["k", "k", "k", "weights", None], "p": [0.01, 0.04, 0.03, 0.01, 0.01]})
    adjusted = stats.holm_within(frame, "family", "p")
    assert adjusted[:3].tolist() == pytest.approx([0.03, 0.06, 0.06])  # Holm over the 3 of family k
    assert adjusted[3] == pytest.approx(0.01) and np.isnan(adjusted[4])  # a family of one; no family


def test_many_pairs_decide_like_one_pair_when_a_constant_shift_has_a_zero_difference():
    """A constant shift on all questions but one (a zero difference) is 'constant' for both paths:
    zero differences are dropped before the decision, in the vectorised path too."""
    from rag_lab.evaluate.statistics.significance import paired_test, paired_tests_many

    a = np.linspace(0.1, 0.6, 30)[None, :]
    b = a + 0.1
    b[0, 0] = a[0, 0]
    p_t, _, decided = paired_tests_many(a, b)
    assert (p_t[0], decided[0]) == paired_test(a[0], b[0], "student") == (2.0 ** (1 - 29), "sign-flip exact")
