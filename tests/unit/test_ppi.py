"""PPI++ against the authors' library (ppi-python), the stratified estimator against its formula by
hand, the agreement figures on small cases worked out by hand, and the refusals of bad input."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from rag_lab import api
from rag_lab.evaluate.statistics.agreement import cohen_kappa, judge_agreement, roc_auc
from rag_lab.evaluate.statistics.calibrate import calibrate, labels_for_width
from rag_lab.evaluate.statistics.ppi import (allocate_budget, merge_sparse_strata, ppi_mean_many, score_bands,
                                             stratified_mean_many)

ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is the test extra: pip install -e '.[test]'")


def _run(seed: int, n_total: int, n_labelled: int, signal: float, prevalence: float = 0.6):
    rng = np.random.default_rng(seed)
    y = (rng.random(n_total) < prevalence).astype(float)
    f = np.clip(signal * y + (1 - signal) * rng.random(n_total) + 0.1 * rng.standard_normal(n_total), 0, 1)
    labelled = np.zeros(n_total, bool)
    labelled[rng.choice(n_total, n_labelled, replace=False)] = True
    return f, y, labelled


@pytest.mark.parametrize("seed,n_total,n_labelled,signal", [(1, 300, 60, 0.5), (2, 120, 40, 0.0), (3, 500, 30, 0.9),
                                                             (4, 200, 50, -0.4)])
def test_calibrate_matches_ppi_python(seed, n_total, n_labelled, signal):
    f, y, labelled = _run(seed, n_total, n_labelled, signal)
    c = api.calibrate(f, [v if m else None for v, m in zip(y, labelled)], alpha=0.05)
    expected = ppi_py.ppi_mean_pointestimate(y[labelled], f[labelled], f[~labelled])
    # the interval: ppi_py's at the tuned λ, with two pseudo-labels of 1 and two of 0 at the mean score
    y_plus = np.concatenate([y[labelled], [1.0, 1.0, 0.0, 0.0]])
    f_plus = np.concatenate([f[labelled], [f[labelled].mean()] * 4])
    low, high = ppi_py.ppi_mean_ci(y_plus, f_plus, f[~labelled], alpha=0.05, lam=c.lam)
    only_low, only_high = ppi_py.classical_mean_ci(y_plus, alpha=0.05)
    plain = ppi_py.ppi_mean_ci(y[labelled], f[labelled], f[~labelled], alpha=0.05)  # without pseudo-labels
    core, se, _ = ppi_mean_many(f, y, labelled)
    assert (core[0] - 1.959963984540054 * se[0], core[0] + 1.959963984540054 * se[0]) == pytest.approx(
        tuple(float(np.ravel(b)[0]) for b in plain), abs=1e-12)
    assert c.estimate == pytest.approx(float(np.ravel(expected)[0]), abs=1e-12)
    assert c.ci == pytest.approx((float(np.ravel(low)[0]), float(np.ravel(high)[0])), abs=1e-12)
    assert c.labels_only_ci == pytest.approx((float(only_low), float(only_high)), abs=1e-12)
    assert c.n_labelled == n_labelled and c.n == n_total
    if signal < 0:  # an anti-correlated judge: power tuning clips λ to 0, the labels alone
        assert c.lam == 0.0 and c.ci == pytest.approx(c.labels_only_ci)
    if signal >= 0.9:
        assert c.width < 0.85 * c.labels_only_width


def test_a_good_judge_narrows_the_interval_and_a_useless_one_costs_little():
    good = calibrate(*_labels_of(*_run(5, 1000, 100, 0.9)))
    useless = calibrate(*_labels_of(*_run(6, 1000, 100, 0.0)))
    assert good.width < 0.7 * good.labels_only_width
    assert useless.width <= 1.05 * useless.labels_only_width


def _labels_of(f, y, labelled):
    return f, [v if m else None for v, m in zip(y, labelled)]


def test_stratified_estimate_is_the_share_weighted_sum_of_per_stratum_ppi():
    f, y, labelled = _run(7, 200, 60, 0.6)
    strata = np.where(np.arange(200) < 50, 0, 1)  # a small stratum over-sampled would bias a plain mean
    estimate, se = stratified_mean_many(f, y, labelled, strata)
    parts = []
    for s in (0, 1):
        inside = strata == s
        lab, unl = labelled & inside, ~labelled & inside
        point = float(np.ravel(ppi_py.ppi_mean_pointestimate(y[lab], f[lab], f[unl]))[0])
        low, high = ppi_py.ppi_mean_ci(y[lab], f[lab], f[unl], alpha=0.05)
        parts.append((inside.mean(), point, (float(np.ravel(high)[0]) - float(np.ravel(low)[0])) / (2 * 1.959963984540054)))
    assert estimate[0] == pytest.approx(sum(w * p for w, p, _ in parts), abs=1e-12)
    between = sum(w * (p - estimate[0]) ** 2 for w, p, _ in parts) / 200  # the strata's shares are drawn too
    assert se[0] == pytest.approx(math.sqrt(sum((w * s) ** 2 for w, _, s in parts) + between), abs=1e-12)
    by_api = calibrate(f, [v if m else None for v, m in zip(y, labelled)], strata=strata)
    assert by_api.estimate == pytest.approx(estimate[0]) and math.isnan(by_api.lam)


def test_sparse_strata_merge_into_their_neighbour():
    strata = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    labelled = np.array([1, 1, 1, 1, 0, 1, 1, 1, 0], bool)
    assert merge_sparse_strata(strata, labelled, minimum=3).tolist() == [0, 0, 0, 2, 2, 2, 2, 2, 2]
    assert merge_sparse_strata(strata, labelled, minimum=9).tolist() == [2] * 9
    assert allocate_budget([100, 50, 850], 40) == [8, 8, 24]  # proportional (4, 2, 34), each band topped up to 8
    assert allocate_budget([3, 50, 850], 40) == [3, 8, 29] and allocate_budget([5, 5, 5], 7) == [3, 2, 2]
    assert score_bands([0.0, 0.33, 0.34, 0.66, 0.67, 1.0]).tolist() == [0, 0, 1, 1, 2, 2]


def test_agreement_figures_by_hand():
    # judge says yes (≥ 0.5) on 3 of the 4 label-1 samples and on 1 of the 4 label-0 samples
    scores = [0.9, 0.8, 0.6, 0.2, 0.7, 0.1, 0.3, 0.4]
    labels = [1, 1, 1, 1, 0, 0, 0, 0]
    a = judge_agreement(scores, labels)
    assert (a.tpr, a.tnr, a.n) == (0.75, 0.75, 8)
    assert a.kappa == pytest.approx(0.5)  # observed 0.75, chance 0.5
    # positives outrank negatives in 12 of 16 pairs (0.6 is below 0.7; 0.2 is below 0.7, 0.3 and 0.4)
    assert a.auc == pytest.approx(12 / 16)
    assert roc_auc([0.5, 0.5], [1, 0]) == 0.5
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    assert math.isnan(roc_auc([0.1, 0.2], [1, 1]))


def test_few_or_rare_labels_are_flagged():
    f, y, labelled = _run(8, 400, 30, 0.5)
    assert "too few labels: 30" in calibrate(*_labels_of(f, y, labelled)).too_few_labels
    f, y, labelled = _run(9, 400, 80, 0.5, prevalence=0.04)
    assert "rarer verdict" in calibrate(*_labels_of(f, y, labelled)).too_few_labels
    f, y, labelled = _run(10, 400, 80, 0.5)
    assert calibrate(*_labels_of(f, y, labelled)).too_few_labels is None


def test_plan_scales_labels_to_the_target_width():
    c = calibrate(*_labels_of(*_run(11, 1000, 50, 0.3)))
    more = labels_for_width(c, c.width / 2, available=950)
    assert 140 <= more <= 160  # four times the labels halve the width: ≈ 150 more
    assert labels_for_width(c, c.width * 2, available=950) == 0
    assert labels_for_width(c, 0.001, available=10) == 10


@pytest.mark.parametrize("scores,labels,needle", [([0.1, 0.2], [1], "same length"), ([0.1, 0.2], [2, None], "0, 1 or None"),
                                                  ([1.5, 0.2], [1, None], "in [0, 1]")])
def test_bad_input_is_refused(scores, labels, needle):
    with pytest.raises(ValueError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        calibrate(scores, labels)


def test_the_statistics_floor_imports_without_llama_index():
    code = ("import sys; import rag_lab.evaluate.statistics.calibrate, rag_lab.evaluate.statistics.ppi; "
            "assert not any(m.startswith('llama_index') for m in sys.modules), 'llama_index imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
