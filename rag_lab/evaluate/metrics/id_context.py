"""ID-based context precision and recall at document level (RAGAS ``IDBasedContextPrecision`` /
``IDBasedContextRecall``): the documents of the chunks given to the LLM vs the pair's source
file(s) (or, for BEIR data, the qrels' relevant documents)."""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricSpec


def _precision(_ctx):
    from ragas.metrics import IDBasedContextPrecision

    return IDBasedContextPrecision()


def _recall(_ctx):
    from ragas.metrics import IDBasedContextRecall

    return IDBasedContextRecall()


SPECS = [
    MetricSpec("id_context_precision", ("retrieved_context_ids", "reference_context_ids"), _precision,
               description="share of retrieved documents that are relevant (document level)"),
    MetricSpec("id_context_recall", ("retrieved_context_ids", "reference_context_ids"), _recall,
               description="share of relevant documents retrieved (document level)"),
]
