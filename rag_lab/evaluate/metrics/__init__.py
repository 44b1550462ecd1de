"""The metric registry: one module per metric (or metric pair), one line each here.

Adding a metric = one module with ``SPECS = [MetricSpec(...)]`` plus its line below.
"""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricContext, MetricSpec

_MODULES = (
    "id_context", "rouge", "string_similarity", "semantic", "key_fact_recall", "figure_placement", "citation_precision", "judged",
)


def all_specs() -> list[MetricSpec]:
    from importlib import import_module

    specs: list[MetricSpec] = []
    for name in _MODULES:
        specs.extend(import_module(f"rag_lab.evaluate.metrics.{name}").SPECS)
    return specs


def offline_metric_names() -> list[str]:
    """Every metric computed without an LLM (the ranx IR metrics come on top where qrels exist)."""
    return [s.name for s in all_specs() if not s.judged]


__all__ = ["MetricContext", "MetricSpec", "all_specs", "offline_metric_names"]
