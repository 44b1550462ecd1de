"""LLM rerank: keeps N, fills up in retrieval order, and records failures instead of hiding them."""

from __future__ import annotations

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.answer.rerank import LabLLMRerank, RerankParseError, parse_choices, rerank_nodes


def nodes(n: int) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(id_=f"n{i}", text=f"chunk {i} " * 50,
                                        metadata={"filename": f"f{i}.pdf", "page": i}), score=1.0 - i / 100)
            for i in range(1, n + 1)]


def ids(results: list[NodeWithScore]) -> list[str]:
    return [r.node.node_id for r in results]


def test_parse_choices_formats() -> None:
    assert parse_choices("Doc: 3, Relevance: 7\nDoc: 1, Relevance: 9", 5) == ([3, 1], [7.0, 9.0])
    assert parse_choices("Document 2 - relevance 8\nDoc:4", 5) == ([2, 4], [8.0, 1.0])
    # 0, out of range and repeats are dropped (the stock parser maps 0 to the last document).
    assert parse_choices("Doc: 0, Relevance: 9\nDoc: 6, Relevance: 9\nDoc: 2, Relevance: 3\nDoc: 2, Relevance: 9", 5) \
        == ([2], [3.0])


@pytest.mark.parametrize("answer", ["", "The income limit is $4,106.", "Doc: 9, Relevance: 7"])
def test_parse_choices_unusable_raises(answer: str) -> None:
    with pytest.raises(RerankParseError, match="no 'Doc: N, Relevance: R' choice among 5 documents"):
        parse_choices(answer, 5)


def test_rerank_keeps_top_n_picks_first_then_fills(scripted) -> None:
    llm = scripted("Doc: 4, Relevance: 9\nDoc: 2, Relevance: 6")
    kept, info = rerank_nodes(nodes(6), "q", LabLLMRerank(llm, top_n=3, choice_batch_size=10), top_n=3)
    assert ids(kept) == ["n4", "n2", "n1"]
    assert (info.status, info.candidates, info.kept, info.picked, info.reason) == ("applied", 6, 3, 2, None)
    assert [r.node.metadata.get("rerank_score") for r in kept] == [9.0, 6.0, None]
    assert [r.score for r in kept] == [0.96, 0.98, 0.99]  # retrieval scores are kept
    assert "rerank_score" in kept[0].node.excluded_llm_metadata_keys
    assert info.describe() == "reranked: kept 3 of 6 (1 filled in retrieval order)"


def test_rerank_parse_failure_keeps_retrieval_order_and_says_why(scripted) -> None:
    llm = scripted("I think the answer is $4,106.")
    kept, info = rerank_nodes(nodes(6), "q", LabLLMRerank(llm, top_n=2), top_n=2)
    assert ids(kept) == ["n1", "n2"]
    assert (info.status, info.kept, info.picked) == ("failed", 2, 0)
    assert info.reason.startswith("RerankParseError: no 'Doc: N, Relevance: R' choice")
    assert "$4,106" in info.reason
    assert info.describe().endswith("kept top 2 of 6 by retrieval order")


def test_rerank_skipped_and_batches(scripted) -> None:
    kept, info = rerank_nodes(nodes(5), "q", None, top_n=2, skip_reason="kendra ranks internally")
    assert ids(kept) == ["n1", "n2"] and (info.status, info.reason) == ("skipped", "kendra ranks internally")
    llm = scripted("Doc: 2, Relevance: 5")
    kept, info = rerank_nodes(nodes(5), "q", LabLLMRerank(llm, top_n=2, choice_batch_size=2), top_n=2)
    assert len(llm.prompts) == 3  # batches of 2, 2, 1; each picks its own Doc 2 (the last: none)


def test_rerank_documents_shrink_to_fit_small_windows(scripted) -> None:
    roomy, tight = scripted("Doc: 1, Relevance: 5"), scripted("Doc: 1, Relevance: 5", context_window=700)
    rerank_nodes(nodes(3), "q", LabLLMRerank(roomy, top_n=1), top_n=1)
    rerank_nodes(nodes(3), "q", LabLLMRerank(tight, top_n=1), top_n=1)
    full = ("chunk 1 " * 50).strip()  # 400 characters: under the default 800, shown whole
    assert full in roomy.prompts[0]
    assert full not in tight.prompts[0] and "chunk 1 " * 10 in tight.prompts[0]


def test_listwise_json_rerank_is_chosen_for_constrained_llms_and_parsed(scripted) -> None:
    from rag_lab.answer.rerank import ListwiseJSONRerank, make_reranker, parse_ranking

    class ConstrainedScript(type(scripted())):
        supports_constrained_output: bool = True

    llm = ConstrainedScript(script='{"ranking": [5, 2, 5, 99]}')
    reranker = make_reranker(llm, top_n=3)
    assert isinstance(reranker, ListwiseJSONRerank) and isinstance(make_reranker(scripted(), 3), LabLLMRerank)
    assert reranker.schema(6)["properties"]["ranking"]["items"]["maximum"] == 6
    kept, info = rerank_nodes(nodes(6), "q", reranker, top_n=3)
    assert ids(kept) == ["n5", "n2", "n1"] and (info.status, info.picked) == ("applied", 2)
    assert "Question: q" in llm.prompts[0] and "Document 6:" in llm.prompts[0]
    with pytest.raises(RerankParseError, match="no ranking among 4"):
        parse_ranking('{"ranking": [0, 7]}', 4)


def test_real_local_listwise_rerank_always_parses(real_llm) -> None:
    from rag_lab.answer.rerank import ListwiseJSONRerank

    kept, info = rerank_nodes(nodes(3), "chunk 2", ListwiseJSONRerank(real_llm, top_n=2, max_chars=60), top_n=2)
    assert info.status == "applied" and 1 <= info.picked <= 2 and len(kept) == 2
