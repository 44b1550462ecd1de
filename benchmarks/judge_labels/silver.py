"""A silver label for the generator's own answers: does every number it states come from its contexts?

Key-fact precision (:mod:`rag_lab.evaluate.facts.key_facts`) against the contexts: the share of the
*answer's* key facts, citation markers ignored, that the contexts state. An answer with a number its
contexts do not state is unsupported there; one without numbers, or whose numbers all appear, counts
as supported (a silver label: a wrong sentence without numbers passes it).
"""

from __future__ import annotations

from typing import Any

from rag_lab.evaluate.facts.key_facts import key_fact_precision


def silver_supported(answer: str, contexts: list[dict[str, Any]]) -> bool:
    # precision, not recall read backwards: it ignores the answer's "[Doc 1: …, Page 4]" markers,
    # whose numbers the contexts never state (they made 4 of 5 cited answers "unsupported")
    share = key_fact_precision(answer, "\n".join(c["text"] for c in contexts))
    return share is None or share == 1.0


def answer_with_contexts(settings: Any, item: dict[str, Any], llm: Any = None) -> str:
    """The configured generator's answer to ``item``'s question from exactly its contexts."""
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    from rag_lab.answer.engine import build_engine

    contexts = item["contexts"]

    class GivenContexts(BaseRetriever):
        def _retrieve(self, query_bundle):
            return [NodeWithScore(node=TextNode(text=c["text"], metadata={"filename": c["filename"], "page": c.get("page"),
                                                                           "doc_id": c["filename"]}), score=1.0 / rank)
                    for rank, c in enumerate(contexts, start=1)]

    if llm is None:
        from rag_lab.models.llm import get_llm

        llm = get_llm(settings)
    engine = build_engine("fusion", settings, llm=llm, retriever=GivenContexts(), rerank=False, top_n=len(contexts),
                          answer_style="free")
    return str(engine.query(item["question"]))
