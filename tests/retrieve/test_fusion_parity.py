"""Our fusion math against ranx and against LlamaIndex's stock QueryFusionRetriever; hybrid's
client-side explanation against Qdrant's own server-side fusion."""

from __future__ import annotations

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.fusion import rrf_fuse
from rag_lab.retrieve.bm25 import BM25Retriever
from rag_lab.retrieve.dense import DenseRetriever
from rag_lab.retrieve.fusion import FusionRetriever
from rag_lab.retrieve.hybrid import HybridRetriever

QUERIES = [
    "maximum parent share of cost for a family of 3",
    "bi-weekly income limit for a family of 5",
    "CRRSA ARPA child care relief funds",
    "start-up awards for child care deserts",
]


def test_rrf_equals_ranx():
    from ranx import Run, fuse

    from rag_lab.evaluate.retrieval.ranx_ids import fixed_width_ids

    # the ids as rag-lab gives them to ranx (one renaming for both legs): the kernels the set-up's
    # warm-up compiled, not a compile for one-letter ids here
    legs, _ = fixed_width_ids({"dense": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.1},
                               "sparse": {"c": 9.0, "e": 5.0, "a": 1.0}}, {})
    dense, sparse = {"q": legs["dense"]}, {"q": legs["sparse"]}
    for k in (1, 10, 60):
        ours = dict(rrf_fuse({"d": sorted(dense["q"], key=dense["q"].get, reverse=True),
                              "s": sorted(sparse["q"], key=sparse["q"].get, reverse=True)}, k=k))
        theirs = fuse([Run(dense), Run(sparse)], method="rrf", params={"k": k}).to_dict()["q"]
        assert set(ours) == set(theirs)
        for doc, score in ours.items():
            assert score == pytest.approx(theirs[doc], rel=1e-12)


def _stock(index, prefetch, top_k):
    legs = [DenseRetriever(index, top_k=prefetch), BM25Retriever(index, top_k=prefetch)]
    return QueryFusionRetriever(legs, llm=MockLLM(), mode="reciprocal_rerank", similarity_top_k=top_k,
                                num_queries=1, use_async=False)


@pytest.mark.parametrize("query", QUERIES)
def test_fusion_matches_stock_where_stock_is_right(texas_index, query):
    stock = _stock(texas_index, prefetch=10, top_k=8).retrieve(query)
    # Stock scores 1/(60 + rank0) == ours with k = 59 (ranks from 1): identical scores and order.
    same_formula = FusionRetriever(texas_index, top_k=8, prefetch=10, fusion_k=59).retrieve(query)
    assert [r.node.node_id for r in same_formula] == [r.node.node_id for r in stock]
    assert [r.score for r in same_formula] == pytest.approx([r.score for r in stock], rel=1e-12)
    # With k = 60 and equal weights the order is the stock order.
    ours = FusionRetriever(texas_index, top_k=8, prefetch=10, fusion_k=60).retrieve(query)
    assert [r.node.node_id for r in ours] == [r.node.node_id for r in stock]


def test_fusion_fixes_what_stock_gets_wrong(texas_index):
    class Fixed(DenseRetriever):
        """Two distinct nodes (ids) with the same text and metadata, e.g. a boilerplate page."""

        def _search(self, query, top_k):
            meta = {"doc_id": "a", "chunk_id": "a#c0", "filename": "a", "page": None}
            return [NodeWithScore(node=TextNode(id_="n1", text="same text", metadata=dict(meta)), score=0.9),
                    NodeWithScore(node=TextNode(id_="n2", text="same text", metadata=dict(meta)), score=0.8)]

    stock = QueryFusionRetriever([Fixed(texas_index)], llm=MockLLM(), mode="reciprocal_rerank", num_queries=1, use_async=False)
    merged = stock.retrieve("q")
    assert len(merged) == 1  # the stock bug: distinct nodes merged by content hash
    assert merged[0].score == 1 / 60 + 1 / 61  # and their scores added

    ours = FusionRetriever(texas_index, top_k=5, prefetch=5)
    ours._retrievers = [Fixed(texas_index), Fixed(texas_index)]
    results = ours.retrieve("q")
    assert [r.node.node_id for r in results] == ["n1", "n2"]
    assert results[0].score == 1 / 61 + 1 / 61  # k exposed (60), ranks from 1, weights 1


def test_fusion_weights_and_k_change_the_terms(texas_index):
    query = QUERIES[0]
    results = FusionRetriever(texas_index, top_k=5, prefetch=10, fusion_k=5, dense_weight=2.0, sparse_weight=0.5).retrieve(query)
    for r in results:
        e = r.node.metadata["explanation"]
        expected_dense = 1 / (5 + e["dense_rank"] / 2.0) if e["dense_rank"] else 0.0
        expected_sparse = 1 / (5 + e["sparse_rank"] / 0.5) if e["sparse_rank"] else 0.0
        assert e["dense_term"] == expected_dense and e["sparse_term"] == expected_sparse
        assert r.score == e["fused_score"] == e["dense_term"] + e["sparse_term"]


@pytest.mark.parametrize("mode", ["relative_score", "dist_based_score"])
def test_fusion_score_modes(texas_index, mode):
    results = FusionRetriever(texas_index, top_k=5, prefetch=10, fusion_mode=mode).retrieve(QUERIES[1])
    assert results and all(a.score >= b.score for a, b in zip(results, results[1:]))
    for r in results:
        e = r.node.metadata["explanation"]
        assert r.score == e["dense_term"] + e["sparse_term"]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("fusion_k,weights", [(60, (1.0, 1.0)), (2, (1.0, 1.0)), (10, (0.7, 1.3))])
def test_hybrid_explanations_match_qdrant_fusion(texas_index, query, fusion_k, weights):
    kwargs = dict(top_k=8, prefetch=10, fusion_k=fusion_k, dense_weight=weights[0], sparse_weight=weights[1])
    server_side = HybridRetriever(texas_index, **kwargs).retrieve(query)
    explained = HybridRetriever(texas_index, explain=True, **kwargs).retrieve(query)
    assert [r.node.node_id for r in explained] == [r.node.node_id for r in server_side]
    assert [r.score for r in explained] == pytest.approx([r.score for r in server_side], rel=1e-6)
    for r in explained:
        e = r.node.metadata["explanation"]
        assert r.score == e["fused_score"] == e["dense_term"] + e["sparse_term"]
        assert e["source"] == ("both" if e["dense_rank"] and e["sparse_rank"] else
                               "dense_only" if e["dense_rank"] else "sparse_only")


def test_hybrid_explanation_legs_are_the_plain_legs(texas_index):
    query = QUERIES[0]
    explained = HybridRetriever(texas_index, top_k=5, prefetch=10, explain=True).retrieve(query)
    dense = [r.node.node_id for r in DenseRetriever(texas_index, top_k=10).retrieve(query)]
    for r in explained:
        e = r.node.metadata["explanation"]
        if e["dense_rank"]:
            assert dense[e["dense_rank"] - 1] == r.node.node_id
