"""Each index as a LlamaIndex vector store, so ``VectorStoreIndex.from_vector_store(...)`` and any
LlamaIndex retriever or query engine run on the lab's data.

- local / server: LlamaIndex's own ``QdrantVectorStore`` (llama-index-vector-stores-qdrant) over
  the same collection and the same named vectors (``dense``, ``sparse``).
- edge: Qdrant Edge has no ``QdrantClient``, which ``QdrantVectorStore`` requires, so
  :class:`EdgeVectorStore` is a small read-only store over the same shard (dense queries).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node


class EdgeVectorStore(BasePydanticVectorStore):
    """Read-only LlamaIndex vector store over a rag-lab edge shard (dense similarity search)."""

    stores_text: bool = True
    is_embedding_query: bool = True
    _backend: Any = PrivateAttr()

    def __init__(self, backend: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._backend = backend

    @classmethod
    def class_name(cls) -> str:
        return "EdgeVectorStore"

    @property
    def client(self) -> Any:
        return self._backend

    def add(self, nodes: list[BaseNode], **kwargs: Any) -> list[str]:
        raise NotImplementedError("rag-lab indexes are built by `rag-lab index`; this store is read-only")

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        raise NotImplementedError("rag-lab indexes are built by `rag-lab index`; this store is read-only")

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        if query.mode not in (VectorStoreQueryMode.DEFAULT,):
            raise NotImplementedError(f"EdgeVectorStore answers dense queries only, not {query.mode.value!r} "
                                      "(use rag-lab's hybrid retriever for engine-side fusion)")
        if query.filters is not None or query.doc_ids or query.node_ids:
            raise NotImplementedError("EdgeVectorStore does not support metadata filters or id restrictions")
        if query.query_embedding is None:
            raise ValueError("EdgeVectorStore needs a query embedding")
        hits = self._backend.dense(query.query_embedding, query.similarity_top_k)
        nodes = [metadata_dict_to_node(h.payload) for h in hits]
        return VectorStoreQueryResult(nodes=nodes, similarities=[h.score for h in hits], ids=[h.id for h in hits])


def vector_store(index) -> BasePydanticVectorStore:
    """The LlamaIndex vector store over ``index`` (a :class:`rag_lab.index.CorpusIndex`)."""
    if index.backend == "edge":
        return EdgeVectorStore(index.vectors)
    from llama_index.vector_stores.qdrant import QdrantVectorStore

    manifest = index.manifest
    return QdrantVectorStore(collection_name=manifest.collection, client=index.client,
                             dense_vector_name=manifest.dense_vector, sparse_vector_name=manifest.sparse_vector)
