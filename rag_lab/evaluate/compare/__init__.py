"""Runs compared over time: two evaluation runs paired by question id (``compare_runs``), what
changed in their set-ups (``facets``), per-question flips, the regression gate (``gate``) and the
history of a runs folder (``history``)."""

from rag_lab.evaluate.compare.comparison import Comparison, compare_runs

__all__ = ["Comparison", "compare_runs"]
