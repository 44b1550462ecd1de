"""How well a judge's scores separate labelled answers: pairwise accuracy and ROC AUC.

A validation item has one supported answer and unsupported ones. Pairwise accuracy is the share of
(supported, unsupported) pairs of the same question where the supported answer scores strictly
higher; a failed judgment (no score) loses its pairs. ROC AUC is over every scored answer (supported
= positive), ties counting one half (Mann–Whitney).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Agreement:
    judgments: int
    failures: int
    pairs: int
    pairs_won: int
    pairs_tied: int
    auc: float | None

    @property
    def failure_rate(self) -> float:
        return self.failures / self.judgments if self.judgments else 0.0

    @property
    def pairwise_accuracy(self) -> float | None:
        return self.pairs_won / self.pairs if self.pairs else None


def roc_auc(positives: list[float], negatives: list[float]) -> float | None:
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def agreement(scores: dict[str, dict[str, float | None]], positive: str = "supported") -> Agreement:
    """``scores``: question id → {answer label → score or None (failed)}."""
    judgments = failures = pairs = won = tied = 0
    positives: list[float] = []
    negatives: list[float] = []
    for by_label in scores.values():
        judgments += len(by_label)
        failures += sum(v is None for v in by_label.values())
        good = by_label.get(positive)
        for label, value in by_label.items():
            if value is not None:
                (positives if label == positive else negatives).append(value)
            if label == positive:
                continue
            pairs += 1
            if good is not None and value is not None:
                won += good > value
                tied += good == value
    return Agreement(judgments, failures, pairs, won, tied, roc_auc(positives, negatives))
