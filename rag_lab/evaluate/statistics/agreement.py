"""How well a judge (or a second person) agrees with a person's labels: Cohen's κ, ROC AUC, TPR/TNR.

The judge's score is cut at 0.5 for κ and the rates (the cut the lab's verdict lines use); the AUC
uses the scores themselves (Mann–Whitney, ties count half). numpy/scipy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CUT = 0.5


def cohen_kappa(first, second) -> float:
    """Cohen's κ of two binary raters on the same items (NaN for no item, and where chance agreement
    is 1 — both raters constant, one class only — κ is undefined: NaN)."""
    a, b = np.asarray(first, dtype=int), np.asarray(second, dtype=int)
    if a.size == 0:
        return float("nan")
    observed = float(np.mean(a == b))
    p_a, p_b = a.mean(), b.mean()
    chance = float(p_a * p_b + (1 - p_a) * (1 - p_b))
    if chance >= 1.0:
        return float("nan")
    return (observed - chance) / (1.0 - chance)


def roc_auc(scores, labels) -> float:
    """P(a positive's score > a negative's), ties half (NaN without both classes)."""
    from scipy.stats import rankdata

    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    positives, negatives = int(y.sum()), int((1 - y).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    ranks = rankdata(s)
    return float((ranks[y == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


@dataclass(frozen=True)
class Agreement:
    n: int  # labelled samples the judge scored
    kappa: float
    auc: float
    tpr: float  # share of the label-1 samples the judge scores ≥ 0.5
    tnr: float  # share of the label-0 samples the judge scores < 0.5

    def line(self) -> str:
        return (f"agreement with the labels: n {self.n}, κ {self.kappa:.2f}, AUC {self.auc:.2f}, "
                f"TPR {self.tpr:.2f}, TNR {self.tnr:.2f} (judge cut at {CUT:g})")


def judge_agreement(scores, labels) -> Agreement:
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    said_yes = (s >= CUT).astype(int)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = float(said_yes[y == 1].mean()) if (y == 1).any() else float("nan")
        tnr = float(1 - said_yes[y == 0].mean()) if (y == 0).any() else float("nan")
    return Agreement(int(y.size), cohen_kappa(said_yes, y), roc_auc(s, y), tpr, tnr)
