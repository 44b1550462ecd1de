"""Agent parts without an LLM: tool-argument validation, numbering and cutting, reply parsing."""

from __future__ import annotations

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.answer import NO_ANSWER, Source
from rag_lab.answer.agent_reply import parse_reply, reply_sources
from rag_lab.answer.agent_tool import RetrievalTool, clamp_top_k, clean_query, clean_threshold

Q = "What is the income limit?"


def node(filename: str, page: int, text: str = "some text", score: float = 0.5) -> NodeWithScore:
    meta = {"doc_id": filename, "chunk_id": f"{filename}#{page}", "filename": filename, "page": page}
    return NodeWithScore(node=TextNode(text=text, metadata=meta, id_=f"{filename}#{page}"), score=score)


class ListRetriever:
    def __init__(self, *batches: list[NodeWithScore]) -> None:
        self.batches = list(batches)

    def retrieve(self, query: str) -> list[NodeWithScore]:
        return self.batches.pop(0)


@pytest.mark.parametrize("value", [
    None, 3, "", "   ", "q", "ab", "query", "QUERY", "<query>", "{query}", "search_docs", "retrieve_context",
    "functions.retrieve_context:", "string", "...", "…", '{"query": "x"}', "[1, 2]", "&#34;query&#34;", "??!",
])
def test_unusable_queries_fall_back_to_the_question(value) -> None:
    assert clean_query(value, Q) == (Q, True)


@pytest.mark.parametrize("value, expected", [
    ("income limit family of 5", "income limit family of 5"),
    ("  BCY   2026 ", "BCY 2026"),
    ("max_income_by_family_2026", "max income by family 2026"),
    ("PSoC", "PSoC"),
])
def test_usable_queries_are_kept_tidied(value, expected) -> None:
    assert clean_query(value, Q) == (expected, False)


@pytest.mark.parametrize("value, expected", [
    (None, 5), (3, 3), ("7", 7), (2.9, 2), (0, 1), (-4, 1), (99, 20), ("many", 5), (float("nan"), 5),
    (float("inf"), 5), (True, 5), ([3], 5),
])
def test_top_k_is_clamped(value, expected) -> None:
    assert clamp_top_k(value) == expected


@pytest.mark.parametrize("value, expected", [
    (None, None), (0.2, 0.2), ("0.5", 0.5), (0, None), (-1, None), ("high", None), (float("nan"), None),
    (float("inf"), None), (False, None), (10 ** 400, None),  # the last: a run-away integer from Qwen 0.5B
])
def test_bad_thresholds_are_ignored(value, expected) -> None:
    assert clean_threshold(value) == expected


def test_numbering_runs_across_calls_and_a_threshold_never_empties_the_result() -> None:
    a, b, c = node("a.pdf", 1, score=0.9), node("b.pdf", 2, score=0.2), node("c.pdf", 3, score=0.1)
    tool = RetrievalTool(ListRetriever([a, b], [c, a], [b]), max_calls=3)
    tool.start_turn(Q)
    first = tool(query="income", threshold=0.5)
    assert "[Doc 1: a.pdf, Page 1]\nsome text" in first and "b.pdf" not in first
    second = tool(query="income again", threshold=5)  # drops everything: ignored
    assert "[Doc 2: c.pdf, Page 3]\nsome text" in second
    assert "[Doc 1: a.pdf, Page 1] (already retrieved above)" in second
    assert tool.turn.calls[1].threshold is None and tool.turn.calls[1].numbers == [2, 1]
    tool(query="more")
    assert [r.node.metadata["filename"] for r in tool.turn.nodes] == ["a.pdf", "c.pdf", "b.pdf"]
    assert not tool.exhausted
    assert "Search limit reached" in tool(query="even more") and tool.exhausted


def test_results_are_cut_to_the_context_window_keeping_the_first_header() -> None:
    long = [node(f"{n}.pdf", 1, "word " * 400) for n in "abc"]
    tool = RetrievalTool(ListRetriever(long), context_window=1200, reserve_tokens=128)
    tool.start_turn(Q, base_tokens=300)
    text = tool(query="income")
    assert "[Doc 2" not in text and "[Doc 1: a.pdf, Page 1]\nword" in text and text.endswith(" …")
    assert len(tool.turn.nodes) == 1  # only what the model saw counts as retrieved
    tiny = RetrievalTool(ListRetriever(long), context_window=600, reserve_tokens=128)
    tiny.start_turn(Q, base_tokens=590)  # no room at all: the header still goes in
    assert "[Doc 1: a.pdf, Page 1]" in tiny(query="income")


def test_no_results_say_so() -> None:
    tool = RetrievalTool(ListRetriever([]))
    tool.start_turn(Q)
    assert NO_ANSWER in tool(query="zzz") and tool.turn.retrieved and tool.turn.nodes == []


@pytest.mark.parametrize("text, answer, sources_text", [
    ("ANSWER: It is $4,106 [Doc 1].\nSOURCES: [Doc 1]", "It is $4,106 [Doc 1].", "[Doc 1]"),
    ("**Answer:** It is 7.\n**Sources:** [Doc 2]", "It is 7.", "[Doc 2]"),
    ("ANSWER: It is 7 [Doc 1] SOURCES: [Doc 1]", "It is 7 [Doc 1]", "[Doc 1]"),
    ("Thinking…\nanswer: It is 7.", "It is 7.", ""),
    ("It is 7.\nSources: a.pdf", "It is 7.", "a.pdf"),
    ("The answer: it depends on sources: many.", "The answer: it depends on sources: many.", ""),
])
def test_reply_sections(text, answer, sources_text) -> None:
    reply = parse_reply(text)
    assert (reply.answer, reply.sources_text, reply.usable) == (answer, sources_text, True)


@pytest.mark.parametrize("text", ["", "  ", "functions.retrieve_context:\n{&#34;query", '{"query": "x"}',
                                  "ANSWER: functions.retrieve_context: {}"])
def test_blank_or_leaked_tool_call_replies_are_no_answer(text) -> None:
    reply = parse_reply(text)
    assert reply.answer == NO_ANSWER and not reply.usable


def test_reply_sources_cited_named_or_none() -> None:
    nodes = [node("a.pdf", 1), node("b.pdf", 2), node("b.pdf", 5)]
    assert reply_sources(parse_reply("ANSWER: x [Doc 3]\nSOURCES: [Doc 3]"), nodes) == [Source("b.pdf", 5)]
    assert reply_sources(parse_reply("ANSWER: x\nSOURCES: b.pdf"), nodes) == [Source("b.pdf", 2)]
    assert reply_sources(parse_reply("ANSWER: x [Doc 9]"), nodes) == []  # out of range cites nothing


def test_results_are_compressed_to_the_lines_the_question_and_the_query_need() -> None:
    """The model searches "bi-weekly income" (every row matches); the user asked about a family
    of 5: the tool result keeps that row, cut to its Bi-Weekly cell, numbered as usual."""
    rows = "\n".join(f"Income Eligibility Limits | Family Size {n} | Annual: ${n}0,000 | Bi-Weekly: ${n},106"
                     for n in range(1, 9))
    table = node("bcy.pdf", 1, f"Income Eligibility Limits\n{rows}")
    tool = RetrievalTool(ListRetriever([table], [table]), context_lines=12)
    tool.start_turn("What is the maximum bi-weekly income for a family of 5 in BCY 2026?")
    result = tool(query="bi-weekly income")
    assert result.endswith("[Doc 1: bcy.pdf, Page 1]\nIncome Eligibility Limits\n…\n"
                           "Income Eligibility Limits | Family Size 5 | Bi-Weekly: $5,106\n…")
    assert [n.node.node_id for n in tool.turn.nodes] == ["bcy.pdf#1"]
    plain = RetrievalTool(ListRetriever([table]))
    plain.start_turn("What is the maximum bi-weekly income for a family of 5 in BCY 2026?")
    assert "Family Size 8 | Annual: $80,000" in plain(query="bi-weekly income")
