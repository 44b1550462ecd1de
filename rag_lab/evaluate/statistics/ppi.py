"""A judged mean corrected by a person's labels: prediction-powered inference (PPI++) with power tuning.

The judge scores every sample (``f`` in [0, 1]); a person labels a random few (``y`` in {0, 1}). The
estimate of the labels' mean over the run is

    θ = λ · mean(f over the unlabelled) + mean(y − λ f over the labelled)

which is unbiased whatever the judge; its interval is θ ± z · sqrt(λ² var(f_unlabelled) / N +
var(y − λ f) / n). λ is PPI++'s power tuning (Angelopoulos, Duchi & Zrnic 2024), estimated from the
data and clipped to [0, 1]: λ = 0 is the labels alone (a judge that is useless or wrong costs
nothing), λ = 1 is plain PPI. The formulas are ``ppi_py.ppi_mean_ci``'s, term for term (tested
against it); here they run on many simulated runs at once, as (runs, samples) arrays with a mask of
the labelled samples, so the validity benchmark exercises this very code.

**Stratified** (:func:`stratified_mean_many`): when labels were drawn per stratum (``rag-lab label
--budget`` draws per mode and judge-score band), each stratum gets its own PPI++ estimate and λ, and
the strata are combined by their share of the samples (stratified PPI, Fisch et al. 2024) — the
sample's allocation then carries no weight error. A stratum with fewer than
:data:`MIN_STRATUM_LABELS` labels is merged into its neighbour first.

numpy and scipy only: this module imports without LlamaIndex.
"""

from __future__ import annotations

import numpy as np

MIN_STRATUM_LABELS = 8  # fewer labels in a score band: it joins the next band (a variance of 2 labels is noise)


def _z(alpha: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(1.0 - alpha / 2.0))


def _masked_mean(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    count = mask.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(mask, values, 0.0).sum(axis=1) / count


def _masked_var(values: np.ndarray, mask: np.ndarray, ddof: int = 0) -> np.ndarray:
    mean = _masked_mean(values, mask)
    count = mask.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(mask, (values - mean[:, None]) ** 2, 0.0).sum(axis=1) / (count - ddof)


def _arrays(scores, labels, labelled, members):
    f = np.atleast_2d(np.asarray(scores, dtype=float))
    y = np.nan_to_num(np.atleast_2d(np.asarray(labels, dtype=float)))
    m = np.atleast_2d(np.asarray(labelled, dtype=bool))
    inside = np.ones_like(m) if members is None else np.atleast_2d(np.asarray(members, dtype=bool))
    return f, y, m & inside, ~m & inside


def power_tuning(scores, labels, labelled, members=None) -> np.ndarray:
    """PPI++'s λ per run (``ppi_py``'s ``_calc_lam_glm`` for a mean): cov(y, f) on the labelled over
    (1 + n/N) var(f) on all, clipped to [0, 1]; no unlabelled sample or constant scores → 0."""
    f, y, lab, unl = _arrays(scores, labels, labelled, members)
    n, big_n = lab.sum(axis=1), unl.sum(axis=1)
    y_bar, f_bar = _masked_mean(y, lab), _masked_mean(f, lab)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = np.where(lab, (y - y_bar[:, None]) * (f - f_bar[:, None]), 0.0).sum(axis=1) / n
        var_all = _masked_var(f, lab | unl, ddof=1)
        lam = cov / ((1.0 + n / big_n) * var_all)
    return np.clip(np.where((big_n > 0) & (var_all > 0) & np.isfinite(lam), lam, 0.0), 0.0, 1.0)


def ppi_mean_many(scores, labels, labelled, members=None, lam=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, standard error, λ) of the labels' mean per run (row). ``scores`` (runs, samples)
    the judge's, ``labels`` the person's (anything where unlabelled), ``labelled`` the mask,
    ``members`` the samples that count (a stratum; default all). ``lam`` None: power-tuned."""
    f, y, lab, unl = _arrays(scores, labels, labelled, members)
    lam = power_tuning(f, y, lab, lab | unl) if lam is None else np.broadcast_to(np.asarray(lam, float), f.shape[:1])
    n, big_n = lab.sum(axis=1), unl.sum(axis=1)
    rectified = y - lam[:, None] * f
    imputed = np.where(big_n > 0, lam * np.nan_to_num(_masked_mean(f, unl)), 0.0)
    estimate = imputed + _masked_mean(rectified, lab)
    with np.errstate(invalid="ignore", divide="ignore"):
        imputed_var = np.where(big_n > 0, lam ** 2 * np.nan_to_num(_masked_var(f, unl)) / big_n, 0.0)
        se = np.sqrt(imputed_var + _masked_var(rectified, lab) / n)
    return estimate, np.where(n >= 2, se, np.nan), lam


def classical_mean_many(labels, labelled, members=None) -> tuple[np.ndarray, np.ndarray]:
    """(mean, standard error) of the labels alone per run: the interval PPI++ is measured against."""
    estimate, se, _ = ppi_mean_many(np.zeros_like(np.asarray(labels, dtype=float)), labels, labelled, members, lam=0.0)
    return estimate, se


def stratified_mean_many(scores, labels, labelled, strata, members=None,
                         labels_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(estimate, standard error) per run, combined over ``strata`` (integer stratum of each sample,
    (samples,) or (runs, samples)) by each stratum's share of the samples; each stratum's estimate is
    PPI++ (or the labels' mean when ``labels_only``). Strata must hold ≥ 2 labels each where they
    hold samples (:func:`merge_sparse_strata` sees to it)."""
    f, y, lab, unl = _arrays(scores, labels, labelled, members)
    strata = np.broadcast_to(np.asarray(strata), f.shape)
    total = (lab | unl).sum(axis=1)
    estimate, variance = np.zeros(len(f)), np.zeros(len(f))
    for stratum in np.unique(strata):
        inside = (strata == stratum) & (lab | unl)
        share = inside.sum(axis=1) / total
        if labels_only:
            part, se, _ = ppi_mean_many(np.zeros_like(f), y, lab, inside, lam=0.0)
        else:
            part, se, _ = ppi_mean_many(f, y, lab, inside)
        present = share > 0
        estimate += np.where(present, share * np.nan_to_num(part), 0.0)
        variance += np.where(present, share ** 2 * se ** 2, 0.0)  # a present stratum without labels → NaN
    return estimate, np.sqrt(variance)


def score_bands(scores, edges=(1 / 3, 2 / 3)) -> np.ndarray:
    """The judge-score band of each score (0 low … len(edges) high): the strata of ``--budget``."""
    return np.searchsorted(np.asarray(edges), np.asarray(scores, dtype=float), side="right")


def merge_sparse_strata(strata, labelled, minimum: int = MIN_STRATUM_LABELS) -> np.ndarray:
    """One run's strata (ordered integers, e.g. score bands) with every stratum that holds fewer than
    ``minimum`` labels merged into its neighbour (the next one up, the last one down), until each
    holds ``minimum`` or only one is left."""
    strata, labelled = np.asarray(strata).copy(), np.asarray(labelled, dtype=bool)
    while True:
        present = np.unique(strata)
        counts = np.array([(labelled & (strata == s)).sum() for s in present])
        if len(present) < 2 or counts.min() >= minimum:
            return strata
        at = int(np.argmin(counts))
        strata[strata == present[at]] = present[at + 1] if at + 1 < len(present) else present[at - 1]


def interval(estimate, se, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """The normal interval estimate ± z se (NaN se → NaN bounds)."""
    half = _z(alpha) * np.asarray(se, dtype=float)
    return np.asarray(estimate) - half, np.asarray(estimate) + half
