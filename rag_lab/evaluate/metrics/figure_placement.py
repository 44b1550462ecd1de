"""Figures in context and in place as custom RAGAS metrics (offline, see
:mod:`rag_lab.evaluate.facts.placement`): 1 when every figure the answer's statements state (the
question's left out) is stated by a line of the chunks given to the LLM (``figures_in_context``), and
by a line about the same row, period, year and table (``figures_in_place``); else 0. The mean is the
share of answers with no uncontained (no misplaced) figure. Defined for answers stating a figure."""

from __future__ import annotations

import functools
import typing as t
from dataclasses import dataclass, field

from ragas.dataset_schema import SingleTurnSample
from ragas.metrics.base import MetricOutputType, MetricType, SingleTurnMetric

from rag_lab.evaluate.facts.placement import FigureCheck, check_figures
from rag_lab.evaluate.metrics.base import MetricSpec


@functools.lru_cache(maxsize=256)
def _cached_check(answer: str, contexts: tuple[str, ...], question: str) -> FigureCheck:
    return check_figures(answer, contexts, question)


def _check(sample) -> FigureCheck:
    """One check per sample for both metrics and their ``applies`` (each reads every context line)."""
    return _cached_check(sample.response or "", tuple(sample.retrieved_contexts or ()), sample.user_input or "")


@dataclass
class _FigureMetric(SingleTurnMetric):
    _required_columns: t.Dict[MetricType, t.Set[str]] = field(
        default_factory=lambda: {MetricType.SINGLE_TURN: {"response", "retrieved_contexts", "user_input:optional"}})
    output_type: MetricOutputType = MetricOutputType.CONTINUOUS
    flaw: t.ClassVar[str]

    def init(self, run_config) -> None:
        pass

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks) -> float:
        return 0.0 if getattr(_check(sample), self.flaw) else 1.0


@dataclass
class FiguresInContext(_FigureMetric):
    name: str = "figures_in_context"
    flaw = "uncontained"


@dataclass
class FiguresInPlace(_FigureMetric):
    name: str = "figures_in_place"
    flaw = "misplaced"


def _states_figure(sample) -> bool:
    return bool(_check(sample).stated)


SPECS = [
    MetricSpec("figures_in_context", ("response", "retrieved_contexts"), lambda _ctx: FiguresInContext(),
               description="1 when every figure the answer states (not the question's) is stated by a context line, "
                           "money by money, counts with their noun; else 0",
               applies=_states_figure),
    MetricSpec("figures_in_place", ("response", "retrieved_contexts"), lambda _ctx: FiguresInPlace(),
               description="1 when every figure the answer states comes from a line (the one it cites) about the same "
                           "row, pay period, year and table as the question and statement name; else 0",
               applies=_states_figure),
]
