"""The confirmation on the rest split: the chosen configuration against the lab's defaults.

Only rest questions reach it (a dev question among them is refused: the number that chose a
configuration must never be the number that confirms it). Their legs are retrieved once into their
own cache, each configuration is fused from them by the grid code, scored by the selection metric,
and compared with the default by the lab's decision test (:mod:`rag_lab.evaluate.statistics.policy`,
the one the ablation marks with; Student's t and Wilcoxon beside it, exploratory) with 95 % percentile-bootstrap intervals of each mean and of the
paired difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag_lab.evaluate.ablation.grid import Config, GridSpec, compute_grid
from rag_lab.evaluate.ablation.legs import retrieve_legs
from rag_lab.evaluate.statistics import policy
from rag_lab.retrieve.registry import engine_fuses
from rag_lab.evaluate.statistics.significance import bootstrap_ci, paired_p_value
from rag_lab.evaluate.tune.scores import selection_scores


@dataclass(frozen=True)
class Scored:
    config: Config
    scores: np.ndarray
    ci: tuple[float, float]

    @property
    def mean(self) -> float:
        return float(self.scores.mean())

    def to_dict(self) -> dict:
        return {"config": self.config.id, "mean": self.mean, "ci_low": self.ci[0], "ci_high": self.ci[1]}


@dataclass(frozen=True)
class Confirmation:
    metric: str
    n: int
    chosen: Scored
    against: Scored  # the chosen mode's default: the test's control
    defaults: list[Scored]  # every mode's default, for the table
    delta: float
    delta_ci: tuple[float, float]
    p_value: float  # the policy's decision test
    decided_by: str
    p_student: float  # exploratory, beside it
    p_wilcoxon: float
    alpha: float = policy.ALPHA

    @property
    def significant(self) -> bool:
        """Better, by the policy: one comparison, so its family is itself."""
        return bool(policy.is_significant(self.p_value, self.alpha)) and self.delta > 0

    def to_dict(self) -> dict:
        return {"metric": self.metric, "questions": self.n, "chosen": self.chosen.to_dict(),
                "against": self.against.to_dict(), "defaults": [d.to_dict() for d in self.defaults],
                "delta": self.delta, "delta_ci": list(self.delta_ci), "p_value": self.p_value,
                "decided_by": self.decided_by, "test": policy.TEST_TEXT, "p_student": self.p_student,
                "p_wilcoxon": self.p_wilcoxon, "significant": self.significant, "alpha": self.alpha}


def confirm_on_rest(index, rest_queries: Mapping[str, str], dev: frozenset[str], qrels, run_dir: Path,
                    chosen: Config, defaults: Sequence[Config], metric: str, depth: int,
                    progress: bool = True, seed: int = 42, num_queries: int = 1, llm=None) -> Confirmation:
    """Scores of ``chosen`` and ``defaults`` on the rest questions, and the paired test of
    ``chosen`` against its mode's default. ``num_queries`` > 1: ``chosen`` searches with that many
    queries (LLM rewrites of the rest questions, :mod:`.query_gen`)."""
    seen = sorted(set(rest_queries) & set(dev))
    if seen:
        raise ValueError(f"the confirmation must not see dev questions, got {len(seen)} (e.g. {seen[:3]})")
    modes = tuple(dict.fromkeys([chosen.mode, *(d.mode for d in defaults)]))
    prefetches = sorted({c.prefetch for c in (chosen, *defaults) if engine_fuses(c.mode)})
    questions, _ = retrieve_legs(index, dict(rest_queries), run_dir, modes, depth, progress=progress,
                                 prefetches=prefetches)
    qids = list(rest_queries)

    def score(config: Config, queries_per_question: int = 1) -> Scored:
        if queries_per_question > 1:
            from rag_lab.evaluate.tune.query_gen import rewrite_scores

            per_q = rewrite_scores(index, llm, rest_queries, questions, [config], queries_per_question, run_dir,
                                   metric, qrels, depth, progress=progress)[0][config]
        else:
            grid = compute_grid(questions, GridSpec.single(config))
            per_q = selection_scores(metric, grid, questions, qrels)[config.id]
        values = np.array([per_q.get(q, 0.0) for q in qids], dtype=float)
        ci = bootstrap_ci(values, seed=seed)
        return Scored(config, values, (ci["ci_low"], ci["ci_high"]))

    picked = score(chosen, num_queries)
    scored_defaults = [score(d) for d in defaults]
    against = next(d for d in scored_defaults if d.config.mode == chosen.mode)
    diff = picked.scores - against.scores
    diff_ci = bootstrap_ci(diff, seed=seed)
    p, decided, _ = policy.decide_pair(against.scores, picked.scores, seed)
    return Confirmation(metric, len(qids), picked, against, scored_defaults, float(diff.mean()),
                        (diff_ci["ci_low"], diff_ci["ci_high"]), p, decided,
                        paired_p_value(against.scores, picked.scores, "student"),
                        paired_p_value(against.scores, picked.scores, "wilcoxon"))
