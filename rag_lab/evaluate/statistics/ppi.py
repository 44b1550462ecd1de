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
# pseudo-labels of each value in an interval's rectifier (``pseudo``): two for one sample (plus four),
# one per stratum (strata hold few labels each); the coverage they buy is measured by benchmarks/ppi_validity.py
PSEUDO_LABELS = 2
STRATUM_PSEUDO_LABELS = 1


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


def ppi_mean_many(scores, labels, labelled, members=None, lam=None,
                  pseudo: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, standard error, λ) of the labels' mean per run (row). ``scores`` (runs, samples)
    the judge's, ``labels`` the person's (anything where unlabelled), ``labelled`` the mask,
    ``members`` the samples that count (a stratum; default all). ``lam`` None: power-tuned.

    ``pseudo``: that many pseudo-labels of 1 and as many of 0, each with the labelled samples' mean
    score, join the rectifier's sample — the centre and spread of an interval that covers with few
    or lopsided labels (Agresti & Coull's "add two successes and two failures", which it is exactly
    when λ = 0). 0 gives ``ppi_py``'s estimate and standard error."""
    f, y, lab, unl = _arrays(scores, labels, labelled, members)
    lam = power_tuning(f, y, lab, lab | unl) if lam is None else np.broadcast_to(np.asarray(lam, float), f.shape[:1])
    n, big_n = lab.sum(axis=1), unl.sum(axis=1)
    rectified = y - lam[:, None] * f
    imputed = np.where(big_n > 0, lam * np.nan_to_num(_masked_mean(f, unl)), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if pseudo:
            pseudo_scores = lam * np.nan_to_num(_masked_mean(f, lab))
            extra = np.stack([1.0 - pseudo_scores, -pseudo_scores])  # the two pseudo-labels' rectified values
            count = n + 2 * pseudo
            centre = (np.where(lab, rectified, 0.0).sum(axis=1) + pseudo * extra.sum(axis=0)) / count
            spread = (np.where(lab, (rectified - centre[:, None]) ** 2, 0.0).sum(axis=1)
                      + pseudo * ((extra - centre) ** 2).sum(axis=0)) / count
        else:
            count, centre, spread = n, _masked_mean(rectified, lab), _masked_var(rectified, lab)
        estimate = imputed + centre
        imputed_var = np.where(big_n > 0, lam ** 2 * np.nan_to_num(_masked_var(f, unl)) / big_n, 0.0)
        se = np.sqrt(imputed_var + spread / count)
    return estimate, np.where(n >= 2, se, np.nan), lam


def classical_mean_many(labels, labelled, members=None, pseudo: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(mean, standard error) of the labels alone per run: the interval PPI++ is measured against."""
    zeros = np.zeros_like(np.asarray(labels, dtype=float))
    estimate, se, _ = ppi_mean_many(zeros, labels, labelled, members, lam=0.0, pseudo=pseudo)
    return estimate, se


def stratified_mean_many(scores, labels, labelled, strata, members=None, labels_only: bool = False,
                         pseudo: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(estimate, standard error) per run, combined over ``strata`` (integer stratum of each sample,
    (samples,) or (runs, samples)) by each stratum's share of the samples; each stratum's estimate is
    PPI++ (or the labels' mean when ``labels_only``). Strata must hold ≥ 2 labels each where they
    hold samples (:func:`merge_sparse_strata` sees to it)."""
    f, y, lab, unl = _arrays(scores, labels, labelled, members)
    strata = np.broadcast_to(np.asarray(strata), f.shape)
    total = (lab | unl).sum(axis=1)
    shares, parts, variance = [], [], np.zeros(len(f))
    for stratum in np.unique(strata):
        inside = (strata == stratum) & (lab | unl)
        share = inside.sum(axis=1) / total
        if labels_only:
            part, se, _ = ppi_mean_many(np.zeros_like(f), y, lab, inside, lam=0.0, pseudo=pseudo)
        else:
            part, se, _ = ppi_mean_many(f, y, lab, inside, pseudo=pseudo)
        present = share > 0
        shares.append(share)
        parts.append(np.where(present, np.nan_to_num(part), 0.0))
        variance += np.where(present, share ** 2 * se ** 2, 0.0)  # a present stratum without labels → NaN
    shares, parts = np.array(shares), np.array(parts)
    estimate = (shares * parts).sum(axis=0)
    # the strata's shares are a draw too (the run's answers, not all answers there could be): the spread
    # between the strata's means over the run's size, as PPI's imputed term carries var(f) / N
    between = (shares * (parts - estimate) ** 2).sum(axis=0) / total
    return estimate, np.sqrt(variance + between)


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


def allocate_budget(sizes, budget: int, minimum: int = MIN_STRATUM_LABELS) -> list[int]:
    """Labels per stratum: proportional to the strata's sizes (largest remainder), then topped up to
    ``minimum`` per stratum (or its size) from the largest allocations while the budget allows —
    so each band of a mode can carry its own correction (:func:`stratified_mean_many` weights them back)."""
    sizes = np.asarray(sizes, dtype=int)
    budget = int(min(budget, sizes.sum()))
    if budget <= 0 or sizes.sum() == 0:
        return [0] * len(sizes)
    exact = budget * sizes / sizes.sum()
    counts = np.floor(exact).astype(int)
    for at in np.argsort(-(exact - counts), kind="stable")[:budget - counts.sum()]:
        counts[at] += 1
    floor = np.minimum(sizes, minimum)
    if floor.sum() <= budget:
        for at in np.flatnonzero(counts < floor):
            while counts[at] < floor[at]:
                donor = int(np.argmax(np.where(counts > floor, counts - floor, -1)))
                counts[donor] -= 1
                counts[at] += 1
    return counts.tolist()
