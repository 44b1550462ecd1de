"""LLM query rewrites in the live fused retrievers: ``QueryFusionRetriever``'s ``num_queries`` > 1.

With ``num_queries`` = n > 1, LlamaIndex's ``QueryFusionRetriever`` asks its LLM for n − 1 rewrites
of the question (one completion, its ``QUERY_GEN_PROMPT``, one rewrite a line) and fuses the
results of the original and of every rewrite by RRF. :func:`generate_rewrites` runs that same
method; :class:`RewriteFusionRetriever` searches both legs of a ``fusion`` or ``hybrid`` retriever
with each query and fuses all 2·n lists with :func:`fuse_ranked_lists` — the lab's weighted RRF
(ranks from 1, ``fusion_k``, leg weights) summed over the queries, ties by first appearance (the
original's dense leg, its sparse leg, then each rewrite's), then the per-document cap and the
top-k. It is the formula ``rag-lab tune`` measures the lever with
(:func:`rag_lab.evaluate.tune.query_gen.fuse_queries`), so a config file with ``num_queries`` > 1
retrieves in ``search``/``ask``/``eval`` what the tuner scored. With n = 1 nothing is wrapped.

Cost: one LLM call per question before any search, and n − 1 more searches per leg.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from rag_lab.fusion.rrf import rrf_term
from rag_lab.retrieve.base import check_query, check_top_k
from rag_lab.retrieve.diversity import post_fusion_results


@dataclass
class RewriteCost:
    questions: int = 0
    calls: int = 0
    seconds: float = 0.0
    prompt_chars: int = 0
    completion_chars: int = 0

    def per_question(self) -> dict:
        n = max(self.questions, 1)
        return {"llm_calls": self.calls / n, "seconds": self.seconds / n, "prompt_chars": self.prompt_chars / n,
                "completion_chars": self.completion_chars / n}

    def describe(self) -> str:
        p = self.per_question()
        return (f"{p['llm_calls']:.0f} LLM call(s), {p['seconds']:.2f} s, ≈{(p['prompt_chars'] + p['completion_chars']) / 4:.0f} "
                f"tokens (≈4 characters a token) per question")


def generate_rewrites(llm, question: str, num_queries: int, cost: RewriteCost | None = None) -> list[str]:
    """The ``num_queries − 1`` rewrites ``QueryFusionRetriever`` would search with (its own prompt and parsing)."""
    from llama_index.core.retrievers import QueryFusionRetriever

    class _Nothing(BaseRetriever):  # QueryFusionRetriever needs a retriever; only its query generation runs
        def _retrieve(self, query_bundle):
            return []

    if num_queries < 2:
        return []
    fusion = QueryFusionRetriever(retrievers=[_Nothing()], llm=llm, num_queries=num_queries, use_async=False)
    started = time.perf_counter()
    rewrites = [b.query_str for b in fusion._get_queries(question)]  # noqa: SLF001 - the method under study
    if cost is not None:
        cost.questions += 1
        cost.calls += 1
        cost.seconds += time.perf_counter() - started
        cost.prompt_chars += len(fusion.query_gen_prompt.format(num_queries=num_queries - 1, query=question))
        cost.completion_chars += sum(len(r) + 1 for r in rewrites)
    return rewrites


def fuse_ranked_lists(lists: Sequence[tuple[Sequence[str], Sequence[str]]], fusion_k: float, dense_weight: float,
                      sparse_weight: float) -> list[tuple[str, float]]:
    """``[(id, score)]`` best first over every query's (dense ids, sparse ids), each list best
    first: the weighted RRF terms summed; equal scores keep first appearance (module doc)."""
    order: dict[str, None] = {}
    score: dict[str, float] = {}
    for dense, sparse in lists:
        for ids, weight in ((dense, dense_weight), (sparse, sparse_weight)):
            for rank, item in enumerate(ids, start=1):
                term = rrf_term(rank, fusion_k, weight)
                if term <= 0:  # a leg weighted 0 contributes nothing
                    continue
                order.setdefault(item, None)
                score[item] = score.get(item, 0.0) + term
    return [(item, score[item]) for item in sorted(order, key=lambda i: -score[i])]  # stable sort


class RewriteFusionRetriever(BaseRetriever):
    """``inner`` (a :class:`~rag_lab.retrieve.fusion.FusionRetriever` or
    :class:`~rag_lab.retrieve.hybrid.HybridRetriever`) searched with the question and ``llm``'s
    ``num_queries − 1`` rewrites, the legs fused by :func:`fuse_ranked_lists`, capped and cut to ``top_k``.
    ``cost`` accumulates the query generation's calls and time."""

    def __init__(self, inner: BaseRetriever, llm, num_queries: int, top_k: int) -> None:
        if num_queries < 2:
            raise ValueError(f"RewriteFusionRetriever needs num_queries ≥ 2, got {num_queries}")
        self.inner, self.llm, self.num_queries, self.top_k = inner, llm, int(num_queries), check_top_k(top_k)
        self.mode_name = getattr(inner, "mode_name", "fused")
        self.cost = RewriteCost()
        self.last_queries: list[str] = []
        super().__init__()

    def _legs(self, query: str) -> tuple[list[NodeWithScore], list[NodeWithScore]]:
        """Both legs' candidates for ``query``, ``prefetch`` deep, best first."""
        from rag_lab.retrieve.hybrid import HybridRetriever

        if isinstance(self.inner, HybridRetriever):
            from llama_index.core.vector_stores.utils import metadata_dict_to_node

            dense, sparse = self.inner.candidate_legs(query)
            payloads = self.inner.index.vectors.payloads(list(dict.fromkeys(i for i, _ in dense + sparse)))
            return tuple([NodeWithScore(node=metadata_dict_to_node(payloads[i]), score=s) for i, s in leg]
                         for leg in (dense, sparse))
        dense_leg, sparse_leg = self.inner._retrievers  # noqa: SLF001 - FusionRetriever's two legs
        return dense_leg.retrieve(query), sparse_leg.retrieve(query)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        question = check_query(query_bundle.query_str)  # before the LLM sees it: not empty, not overlong
        self.last_queries = [question, *generate_rewrites(self.llm, question, self.num_queries, self.cost)]
        nodes: dict[str, NodeWithScore] = {}
        lists = []
        for query in self.last_queries:
            dense, sparse = self._legs(query)
            for hit in sparse + dense:
                nodes.setdefault(hit.node.node_id, hit)
            lists.append(([h.node.node_id for h in dense], [h.node.node_id for h in sparse]))
        inner = self.inner
        weights = getattr(inner, "weights", None) or (inner.dense_weight, inner.sparse_weight)
        fused = fuse_ranked_lists(lists, inner.fusion_k, *weights)
        results = [NodeWithScore(node=nodes[i].node, score=s) for i, s in fused]
        return post_fusion_results(results, inner.config.with_levers(top_k=self.top_k))
