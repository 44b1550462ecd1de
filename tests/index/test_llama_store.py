"""Each index as a LlamaIndex vector store: `dense` through VectorStoreIndex.from_vector_store(...)
equals the lab's own dense retriever, on the edge shard (EdgeVectorStore) and on qdrant-client's
local mode (LlamaIndex's QdrantVectorStore over the same collection and named vectors)."""

from __future__ import annotations

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.index import CorpusIndex, build_index
from rag_lab.retrieve.dense import DenseRetriever
from tests.index.test_engines import QUERIES, _corpus


@pytest.fixture(scope="module", params=["edge", "local"])
def index(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"store-{request.param}")
    dataset = resolve_dataset(_corpus(root / "corpus"))
    settings = load_settings(data_dir=root / "lab", vector_backend=request.param)
    build_index(dataset, settings, progress=False)
    return CorpusIndex.open(dataset, settings)


def test_store_type_per_backend(index):
    store = index.vector_store()
    if index.backend == "edge":
        from rag_lab.index.llama_store import EdgeVectorStore

        assert isinstance(store, EdgeVectorStore)
    else:
        from llama_index.vector_stores.qdrant import QdrantVectorStore

        assert isinstance(store, QdrantVectorStore)
        assert store.collection_name == index.collection and store.dense_vector_name == "dense"


@pytest.mark.parametrize("query", QUERIES)
def test_dense_through_llamaindex_equals_the_lab_dense_retriever(index, query):
    llama = VectorStoreIndex.from_vector_store(index.vector_store(), embed_model=index.embed_model)
    theirs = llama.as_retriever(similarity_top_k=7).retrieve(query)
    ours = DenseRetriever(index, top_k=7).retrieve(query)
    assert [r.node.node_id for r in theirs] == [r.node.node_id for r in ours]
    assert [r.score for r in theirs] == pytest.approx([r.score for r in ours], abs=1e-6)
    assert [r.node.get_content() for r in theirs] == [r.node.get_content() for r in ours]
    assert theirs[0].node.metadata["filename"] == ours[0].node.metadata["filename"]


def test_a_query_engine_runs_on_the_lab_data(index):
    llama = VectorStoreIndex.from_vector_store(index.vector_store(), embed_model=index.embed_model)
    response = llama.as_query_engine(llm=MockLLM(), similarity_top_k=3).query("heron by the quarry lake")
    assert len(response.source_nodes) == 3
    assert "heron" in response.source_nodes[0].node.get_content()
