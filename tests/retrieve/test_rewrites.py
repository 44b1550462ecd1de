"""num_queries > 1 in the live fused retrievers: QueryFusionRetriever's rewrites, driven by a scripted LLM."""

from __future__ import annotations

import re

import pytest

from rag_lab.retrieve import build_retriever
from rag_lab.retrieve.fusion import FusionRetriever
from rag_lab.retrieve.hybrid import HybridRetriever
from rag_lab.retrieve.rewrites import RewriteFusionRetriever, fuse_ranked_lists
from tests.answer.conftest import ScriptedLLM

QUESTION = "maximum bi-weekly income family of 5"
REWRITES = {"maximum bi-weekly income family of 5": ["income eligibility limits BCY 2026", "parent share of cost"]}


def scripted_rewrites(prompt: str) -> str:
    query = re.search(r"Query: (.*)\n", prompt).group(1)
    return "\n".join(REWRITES[query])


def test_fuse_ranked_lists_sums_rrf_over_queries_ties_by_first_appearance():
    fused = fuse_ranked_lists([(["a", "b"], ["b", "c"]), (["c", "d"], [])], fusion_k=1, dense_weight=1.0,
                              sparse_weight=1.0)
    scores = dict(fused)
    assert scores["b"] == pytest.approx(1 / 3 + 1 / 2) and scores["c"] == pytest.approx(1 / 3 + 1 / 2)
    assert [i for i, _ in fused] == ["b", "c", "a", "d"]  # b and c tie: b appeared first (the original's dense leg)
    dropped = fuse_ranked_lists([(["a"], ["b"])], fusion_k=60, dense_weight=1.0, sparse_weight=0.0)
    assert [i for i, _ in dropped] == ["a"]  # a leg weighted 0 contributes nothing


@pytest.mark.parametrize("mode", ["fusion", "hybrid"])
def test_num_queries_reaches_the_live_retriever_and_fuses_every_querys_legs(lab_settings, texas_index, mode):
    llm = ScriptedLLM(script=scripted_rewrites)
    params = {"fusion_k": 10, "prefetch": 4, "max_per_doc": 1}  # texas_childcare has 15 chunks: a shallow prefetch
    retriever = build_retriever(mode, lab_settings, "texas_childcare", top_k=3, num_queries=3, llm=llm, **params)
    assert isinstance(retriever, RewriteFusionRetriever)
    results = retriever.retrieve(QUESTION)

    assert len(llm.prompts) == 1 and "Generate 2 search queries" in llm.prompts[0]  # one call, its own prompt
    assert retriever.last_queries == [QUESTION, *REWRITES[QUESTION]]
    assert retriever.cost.calls == 1 and retriever.cost.questions == 1
    # the same fusion computed by hand from each query's two legs
    plain = build_retriever(mode, lab_settings, "texas_childcare", top_k=3, **params)
    assert isinstance(plain, FusionRetriever if mode == "fusion" else HybridRetriever)
    lists = []
    for query in retriever.last_queries:
        dense, sparse = retriever._legs(query)
        lists.append(([h.node.node_id for h in dense], [h.node.node_id for h in sparse]))
        assert len(dense) == len(sparse) == 4
    expected, per_doc = [], {}
    for node_id, _ in fuse_ranked_lists(lists, 10, 1.0, 1.0):
        doc = next(r for r in _all_hits(retriever, lists) if r.node.node_id == node_id).node.metadata["filename"]
        if per_doc.get(doc):
            continue
        per_doc[doc] = 1
        expected.append(node_id)
    assert [r.node.node_id for r in results] == expected[:3]
    # the rewrites' legs bring candidates the question's own legs did not have
    assert set(lists[1][0] + lists[1][1] + lists[2][0] + lists[2][1]) - set(lists[0][0] + lists[0][1])
    plain_ids = [r.node.node_id for r in plain.retrieve(QUESTION)]
    own = fuse_ranked_lists(lists[:1], 10, 1.0, 1.0)  # the question alone: the plain retriever's ranking
    assert plain_ids[0] == own[0][0]


def _all_hits(retriever, lists):
    for query in retriever.last_queries:
        dense, sparse = retriever._legs(query)
        yield from dense + sparse


def test_one_query_is_the_plain_retriever_and_asks_no_llm(lab_settings, texas_index):
    llm = ScriptedLLM(script=scripted_rewrites)
    retriever = build_retriever("hybrid", lab_settings, "texas_childcare", top_k=5, num_queries=1, llm=llm)
    assert isinstance(retriever, HybridRetriever)
    retriever.retrieve(QUESTION)
    assert llm.prompts == []
    dense = build_retriever("dense", lab_settings, "texas_childcare", top_k=5, num_queries=3, llm=llm)
    dense.retrieve(QUESTION)  # a single-leg mode takes no rewrites (like fusion_k, the fused modes' lever)
    assert llm.prompts == []
