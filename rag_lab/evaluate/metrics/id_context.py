"""ID-based context precision and recall at document level (RAGAS ``IDBasedContextPrecision`` /
``IDBasedContextRecall``): the documents of the chunks given to the LLM vs the pair's source
file(s) (or, for BEIR data, the qrels' relevant documents).

``ragas.metrics.collections`` has no ID-based variant (RAGAS 0.4.3): the classes come from the modules
they live in (``ragas.metrics`` re-exports them with a DeprecationWarning). They call no LLM."""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricSpec


def _precision(_ctx):
    from ragas.metrics._context_precision import IDBasedContextPrecision

    return IDBasedContextPrecision()


def _recall(_ctx):
    from ragas.metrics._context_recall import IDBasedContextRecall

    return IDBasedContextRecall()


SPECS = [
    MetricSpec("id_context_precision", ("retrieved_context_ids", "reference_context_ids"), _precision,
               description="share of retrieved documents that are relevant (document level)"),
    MetricSpec("id_context_recall", ("retrieved_context_ids", "reference_context_ids"), _recall,
               description="share of relevant documents retrieved (document level)"),
]
