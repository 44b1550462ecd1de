"""What a metric module provides: a name, the sample fields it needs, and a RAGAS metric object.

Each metric lives in its own module and registers a :class:`MetricSpec`; the scorer turns a run
record into a RAGAS ``SingleTurnSample`` and asks each applicable metric for its score.
A metric whose inputs are missing (no reference answer, no source files) is *not applicable*:
it gets no score at all, which is different from a failed or NaN score (counted and shown).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Fields of ragas.SingleTurnSample a metric may need.
Field = str


@dataclass(frozen=True)
class MetricContext:
    """What building a metric may need: settings (for the embedding model) and the judge LLM."""

    settings: Any
    judge_llm: Any = None  # a LlamaIndex LLM; None offline


@dataclass(frozen=True)
class MetricSpec:
    name: str  # the column name in samples.jsonl and the frames
    requires: tuple[Field, ...]  # SingleTurnSample fields that must be non-empty
    build: Callable[[MetricContext], Any]  # -> a ragas SingleTurnMetric
    judged: bool = False  # needs an LLM judge (only with --judge)
    description: str = ""
    # Beyond non-empty fields: is the metric defined for this sample? (e.g. key-fact recall needs
    # a reference that states key facts). Not applicable = no score, not a NaN.
    applies: Callable[[Any], bool] | None = None
