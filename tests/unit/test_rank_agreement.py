"""τ_b between two question sets' rankings: agreeing sets score near 1, a reversed ranking near −1,
the split-half ceiling is drawn from disjoint halves, and a set that ranks nothing gives NaN, quietly."""

from __future__ import annotations

import warnings

import numpy as np

from rag_lab.evaluate.statistics.rank_agreement import agreement, split_half, tau_b


def _scores(rates, n, seed):
    rng = np.random.default_rng(seed)
    return (rng.random((len(rates), n)) < np.asarray(rates)[:, None]).astype(float)


def test_the_same_ranking_agrees_and_a_reversed_one_disagrees():
    rates = np.linspace(0.1, 0.9, 8)
    a, b = _scores(rates, 400, 1), _scores(rates, 400, 2)
    same = agreement(a, b, n_resamples=200)
    assert same.tau_b > 0.8 and same.ci_low <= same.tau_b <= same.ci_high
    assert agreement(a, b[::-1], n_resamples=200).tau_b < -0.8


def test_split_half_uses_disjoint_halves_of_the_asked_size():
    a = _scores(np.linspace(0.2, 0.8, 6), 100, 3)
    ceiling = split_half(a, 30, repeats=50)
    assert ceiling.n_a == ceiling.n_b == 30 and -1 <= ceiling.ci_low <= ceiling.tau_b <= ceiling.ci_high <= 1
    assert split_half(a, 80, repeats=5).n_a == 50  # never more than half the set


def test_a_set_that_ranks_nothing_gives_nan_without_warnings():
    flat = np.ones((4, 10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(tau_b(flat.mean(axis=1), np.arange(4.0)))
        assert np.isnan(split_half(flat, 5, repeats=5).tau_b)
