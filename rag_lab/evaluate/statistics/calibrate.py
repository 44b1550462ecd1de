"""One judged mean calibrated by labels: the PPI++ estimate, its interval, the labels-only interval
beside it and the judge's agreement with the labels (``rag_lab.api.calibrate``).

    c = calibrate(scores, labels)          # labels: 0/1 where labelled, None elsewhere
    c.estimate, c.ci, c.labels_only_ci, c.n_labelled, c.kappa, c.auc, c.tpr, c.tnr
    c.too_few_labels                       # a reason, or None

``estimate`` is PPI++'s (``ppi_py``'s); the intervals are normal ones centred and scaled with
pseudo-labels (:func:`~.ppi.ppi_mean_many`'s ``pseudo``: plus four, which keeps 95 % coverage with 40
labels where the plain normal interval gives 0.92). With fewer than :data:`MIN_LABELS` labels, or fewer than
:data:`MIN_CLASS` of the rarer label value, its coverage falls short of 95 % (measured by
``benchmarks/ppi_validity.py``) and ``too_few_labels`` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rag_lab.evaluate.statistics.agreement import judge_agreement
from rag_lab.evaluate.statistics.ppi import (PSEUDO_LABELS, STRATUM_PSEUDO_LABELS, classical_mean_many, interval,
                                             merge_sparse_strata, ppi_mean_many, stratified_mean_many)

MIN_LABELS = 40
MIN_CLASS = 10  # labels of the rarer value: below this the normal interval under-covers


@dataclass(frozen=True)
class Calibration:
    estimate: float  # PPI++: the labels' mean over every scored sample, corrected by the judge
    ci: tuple[float, float]
    labels_only_ci: tuple[float, float]
    n_labelled: int
    kappa: float
    auc: float
    tpr: float
    tnr: float
    raw_mean: float  # the judge's own mean (what the run printed before labels)
    labels_only_estimate: float
    n: int  # samples the judge scored
    lam: float  # power tuning: 0 = the labels alone, 1 = plain PPI (NaN when stratified)
    too_few_labels: str | None = None
    alpha: float = 0.05

    @property
    def width(self) -> float:
        return self.ci[1] - self.ci[0]

    @property
    def labels_only_width(self) -> float:
        return self.labels_only_ci[1] - self.labels_only_ci[0]

    def to_dict(self) -> dict:
        from dataclasses import asdict

        return asdict(self)


def few_labels_reason(labels) -> str | None:
    """Why a normal interval on these 0/1 labels may under-cover, or None."""
    y = np.asarray(labels, dtype=int)
    rarer = int(min(y.sum(), y.size - y.sum()))
    if y.size < MIN_LABELS:
        return f"too few labels: {y.size} (below {MIN_LABELS} the interval may cover less than it says)"
    if rarer < MIN_CLASS:
        return (f"too few labels: only {rarer} of the rarer verdict (below {MIN_CLASS} the interval may cover "
                "less than it says)")
    return None


def _split(scores, labels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    f = np.asarray(scores, dtype=float)
    raw = list(labels)
    if len(raw) != f.size:
        raise ValueError(f"scores and labels must have the same length: {f.size} scores, {len(raw)} labels")
    labelled = np.array([value is not None and not (isinstance(value, float) and math.isnan(value)) for value in raw])
    y = np.array([float(value) if ok else np.nan for value, ok in zip(raw, labelled)])
    if not np.isin(y[labelled], (0.0, 1.0)).all():
        raise ValueError("labels must be 0, 1 or None (unlabelled)")
    if np.isnan(f).any() or (f < 0).any() or (f > 1).any():
        raise ValueError("scores must be numbers in [0, 1], one per sample (drop unscored samples first)")
    return f, y, labelled


def calibrate(scores, labels, alpha: float = 0.05, strata=None) -> Calibration:
    """``scores``: the judge's score of every sample (floats in [0, 1]); ``labels``: 0/1 for the
    labelled samples, None for the rest, same length. ``strata``: the stratum of each sample when the
    labels were drawn per stratum (``rag-lab label --budget``), else a simple random sample is assumed."""
    f, y, labelled = _split(scores, labels)
    n = int(labelled.sum())
    if strata is None:
        estimate, lam = (float(v[0]) for v in ppi_mean_many(f, y, labelled)[::2])
        centre, se = (float(v[0]) for v in ppi_mean_many(f, y, labelled, lam=lam, pseudo=PSEUDO_LABELS)[:2])
        only = float(classical_mean_many(y, labelled)[0][0])
        only_centre, only_se = (float(v[0]) for v in classical_mean_many(y, labelled, pseudo=PSEUDO_LABELS))
    else:
        merged = merge_sparse_strata(strata, labelled)
        estimate, only = (float(stratified_mean_many(f, y, labelled, merged, labels_only=alone)[0][0])
                          for alone in (False, True))
        centre, se = (float(v[0]) for v in stratified_mean_many(f, y, labelled, merged, pseudo=STRATUM_PSEUDO_LABELS))
        only_centre, only_se = (float(v[0]) for v in stratified_mean_many(f, y, labelled, merged, labels_only=True,
                                                                          pseudo=STRATUM_PSEUDO_LABELS))
        lam = float("nan")
    # a mean of 0/1 labels lies in [0, 1]: cutting the interval there loses no coverage
    low, high = np.clip(interval(centre, se, alpha), 0.0, 1.0)
    only_low, only_high = np.clip(interval(only_centre, only_se, alpha), 0.0, 1.0)
    agreement = judge_agreement(f[labelled], y[labelled])
    nan = float("nan")
    return Calibration(estimate if n else nan, (float(low), float(high)), (float(only_low), float(only_high)), n,
                       agreement.kappa, agreement.auc, agreement.tpr, agreement.tnr,
                       float(f.mean()) if f.size else nan, only if n else nan, int(f.size), lam,
                       few_labels_reason(y[labelled]), alpha)


def labels_for_width(calibration: Calibration, target_width: float, available: int) -> int:
    """How many more labels would bring the interval to ``target_width`` (its width falls as
    1/√labels at the judge's measured usefulness; a worst-case 0/1 spread before 2 labels), at most
    the ``available`` unlabelled samples."""
    n = calibration.n_labelled
    width = calibration.width
    if n < 2 or not math.isfinite(width) or width <= 0:
        from scipy.stats import norm

        needed = math.ceil((2 * norm.ppf(1 - calibration.alpha / 2) * 0.5 / target_width) ** 2)
    else:
        needed = math.ceil(n * (width / target_width) ** 2)
    return int(min(max(needed - n, 0), available))
