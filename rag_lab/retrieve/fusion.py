"""`fusion`: LlamaIndex's ``QueryFusionRetriever`` over dense + BM25, client-side, made exact.

What the stock class gets wrong and this subclass fixes:
- RRF's k is hard-coded to 60 with 0-based ranks → ``fusion_k`` is exposed, ranks count from 1;
- ``retriever_weights`` are ignored by RRF → they weight each leg's RRF term;
- results are de-duplicated by content hash, so two chunks with the same text merge and their
  scores add → de-duplicated by node id;
- an LLM is demanded even with ``num_queries=1`` → a ``MockLLM`` (no query generation).
Every result carries an explanation: both legs' ranks, scores and terms. The levers come as one
:class:`~rag_lab.retrieve.configuration.RetrievalConfig` (or as its field names); the fused list goes
through the one post-fusion step the ablation grid applies too (the cap and any added axis, then the
top-k: :func:`rag_lab.retrieve.diversity.post_fusion_results`).
"""

from __future__ import annotations

from typing import Literal

from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.retrievers.fusion_retriever import FUSION_MODES
from llama_index.core.schema import NodeWithScore, QueryBundle

from rag_lab.fusion import Explanation, explain_fusion, rank_fused
from rag_lab.fusion.score import leg_contributions
from rag_lab.index import CorpusIndex
from rag_lab.retrieve.base import check_query, checked_levers, finalize_results
from rag_lab.retrieve.bm25 import BM25Retriever
from rag_lab.retrieve.configuration import DEFAULTS, RetrievalConfig, check_leg_weights
from rag_lab.retrieve.post_fusion import needs_whole_list
from rag_lab.retrieve.dense import DenseRetriever
from rag_lab.retrieve.diversity import post_fusion_results

FusionMode = Literal["reciprocal_rerank", "relative_score", "dist_based_score"]
DENSE, SPARSE = 0, 1


def _rescored(explanation: Explanation, dense_term: float, sparse_term: float) -> Explanation:
    return type(explanation)(**{**explanation.to_dict(), "dense_term": dense_term, "sparse_term": sparse_term,
                                "fused_score": dense_term + sparse_term})


class FusionRetriever(QueryFusionRetriever):
    mode_name = "fusion"

    def __init__(
        self,
        index: CorpusIndex,
        config: RetrievalConfig | None = None,
        *,
        fusion_mode: FusionMode = "reciprocal_rerank",
        score_threshold: float | None = None,
        **levers,
    ) -> None:
        if fusion_mode not in ("reciprocal_rerank", "relative_score", "dist_based_score"):
            raise ValueError(
                f"fusion_mode must be reciprocal_rerank, relative_score or dist_based_score, got {fusion_mode!r}"
            )
        self.config = checked_levers((config or DEFAULTS).with_levers(mode=self.mode_name, **levers))
        self.top_k, self.prefetch, self.fusion_k = self.config.top_k, self.config.prefetch, self.config.fusion_k
        self.weights = check_leg_weights(self.config.dense_weight, self.config.sparse_weight)
        self.max_per_doc = self.config.max_per_doc
        legs = [DenseRetriever(index, top_k=self.prefetch, score_threshold=score_threshold),
                BM25Retriever(index, top_k=self.prefetch)]
        whole = needs_whole_list(self.config.post_fusion_values())
        super().__init__(
            # a kernel off its default (a cap) reads the whole fused list (both legs' candidates), refilling the top-k
            retrievers=legs, llm=MockLLM(), mode=FUSION_MODES(fusion_mode),
            similarity_top_k=2 * self.prefetch if whole else self.top_k,
            num_queries=1, use_async=False, retriever_weights=list(self.weights),
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = check_query(query_bundle.query_str)
        return finalize_results(post_fusion_results(super()._retrieve(QueryBundle(query)), self.config))

    @staticmethod
    def _legs(results) -> tuple[list[NodeWithScore], list[NodeWithScore]]:
        by_leg: dict[int, list[NodeWithScore]] = {DENSE: [], SPARSE: []}
        for (_, leg), hits in results.items():
            by_leg[leg].extend(hits)
        return by_leg[DENSE], by_leg[SPARSE]

    def _fuse(self, results, contributions=None) -> list[NodeWithScore]:
        dense, sparse = self._legs(results)
        nodes = {hit.node.node_id: hit.node for hit in sparse + dense}  # dense copy wins
        explained = explain_fusion(
            [(h.node.node_id, h.score) for h in dense], [(h.node.node_id, h.score) for h in sparse],
            self.fusion_k, *self.weights,
        )
        if contributions is not None:  # score-based modes: replace RRF terms by scaled scores
            explained = {node_id: _rescored(e, contributions[0].get(node_id, 0.0), contributions[1].get(node_id, 0.0))
                         for node_id, e in explained.items()}
        fused = []
        for node_id, explanation in rank_fused(explained):  # ties: the one rule hybrid follows too
            node = nodes[node_id]
            node.metadata["explanation"] = explanation.to_dict()
            fused.append(NodeWithScore(node=node, score=explanation.fused_score))
        return fused

    def _reciprocal_rerank_fusion(self, results) -> list[NodeWithScore]:
        return self._fuse(results)

    def _relative_score_fusion(self, results, dist_based: bool | None = False) -> list[NodeWithScore]:
        dense, sparse = self._legs(results)
        contributions = (
            leg_contributions([(h.node.node_id, h.score) for h in dense], self.weights[0], bool(dist_based)),
            leg_contributions([(h.node.node_id, h.score) for h in sparse], self.weights[1], bool(dist_based)),
        )
        return self._fuse(results, contributions)
