"""What every rag-lab retriever shares: argument checks and the metadata contract.

Subclasses implement ``_search(query, top_k) -> list[NodeWithScore]``; ``_retrieve`` validates
first so that every mode rejects bad input the same way. Modes that embed the query also implement
``_search_vector`` and use a ``QueryBundle.embedding`` the caller computed (e.g. in a batch).
"""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from rag_lab.retrieve.configuration import DEFAULTS, RetrievalConfig, check_fusion_k, check_leg_weights
from rag_lab.retrieve.post_fusion import check_max_per_doc

# Metadata every result node carries (the contract suite checks it).
REQUIRED_METADATA = ("doc_id", "chunk_id", "filename", "page")
# Metadata the LLM and the embedder must not see.
INTERNAL_METADATA = ("chunk_id", "doc_id", "explanation")
MAX_QUERY_CHARS = 20_000


def check_top_k(top_k: int, name: str = "top_k") -> int:
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
        raise ValueError(f"{name} must be a whole number ≥ 1, got {top_k!r}")
    return top_k


def checked_levers(config: RetrievalConfig) -> RetrievalConfig:
    """``config`` when its fused levers are valid (a ``ValueError`` naming the first that is not)."""
    check_fusion_k(config.fusion_k)
    check_top_k(config.top_k)
    check_top_k(config.prefetch, "prefetch")
    check_leg_weights(config.dense_weight, config.sparse_weight)
    check_max_per_doc(config.max_per_doc)
    return config


def check_query(query: str) -> str:
    if not isinstance(query, str):
        raise ValueError(f"The query must be text, got {type(query).__name__} {query!r}")
    if not query.strip():
        raise ValueError("The query is empty: pass a question or keywords to search for")
    # Very long queries are cut, not rejected: embedders and Qdrant handle the first part.
    return query.strip()[:MAX_QUERY_CHARS]


def finalize_results(results: list[NodeWithScore]) -> list[NodeWithScore]:
    """Guarantee the metadata contract and hide internal keys from the LLM and embedder."""
    for result in results:
        node = result.node
        node.metadata.setdefault("page", None)
        for key in INTERNAL_METADATA:
            for excluded in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
                if key not in excluded:
                    excluded.append(key)
    return results


class LabRetriever(BaseRetriever):
    """Base class for rag-lab's retrievers."""

    mode_name: str = "base"

    def __init__(self, top_k: int = DEFAULTS.top_k, **kwargs) -> None:
        self.top_k = check_top_k(top_k)
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = check_query(query_bundle.query_str)
        if query_bundle.embedding is not None and self.embeds_queries:
            # A caller that embedded its questions in a batch passes each vector in the QueryBundle.
            results = self._search_vector(query, list(query_bundle.embedding), self.top_k)
        else:
            results = self._search(query, self.top_k)
        return finalize_results(results)[: self.top_k]

    #: True for modes that embed the query (they accept a precomputed ``QueryBundle.embedding``).
    embeds_queries: bool = False

    def _search(self, query: str, top_k: int) -> list[NodeWithScore]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _search_vector(self, query: str, vector: list[float], top_k: int) -> list[NodeWithScore]:
        raise NotImplementedError(f"{type(self).__name__} does not search by a query embedding")
