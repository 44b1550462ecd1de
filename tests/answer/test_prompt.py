"""The shared prompt and citation parsing, on exact strings."""

from __future__ import annotations

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.answer.context import build_context
from rag_lab.answer.prompt import ANSWER_PROMPT, NO_ANSWER, cited_numbers, extract_sources, format_context
from rag_lab.answer.types import Source


def node(filename: str, page: int | None, text: str = "text", url: str | None = None) -> NodeWithScore:
    meta = {"doc_id": filename, "chunk_id": f"{filename}#{page}", "filename": filename, "page": page}
    if url:
        meta["source_url"] = url
    return NodeWithScore(node=TextNode(text=text, metadata=meta), score=1.0)


NODES = [
    node("a.pdf", 1, "Alpha text.", url="https://x/a.pdf"),
    node("b.pdf", 2, "Beta text."),
    node("page.html", None, "Gamma text."),
    node("a.pdf", 1, "Alpha again, same page."),
]


def test_format_context_exact() -> None:
    assert format_context(NODES[:3]) == (
        "[Doc 1: a.pdf, Page 1]\nAlpha text.\n\n"
        "[Doc 2: b.pdf, Page 2]\nBeta text.\n\n"
        "[Doc 3: page.html]\nGamma text."
    )


def test_prompt_asks_for_citations_and_only_the_documents() -> None:
    text = ANSWER_PROMPT.format(context_str="CTX", query_str="Q?")
    assert text == (
        "Answer the question using only the numbered documents below.\n"
        "Cite the documents you use with their number, for example [Doc 1] or [Doc 2].\n"
        f"If the documents do not contain the answer, reply: {NO_ANSWER}.\n\n"
        "CTX\n\nQuestion: Q?\nAnswer: "
    )


@pytest.mark.parametrize("answer, numbers", [
    ("It is $4,106 [Doc 3].", [3]),
    ("See [Doc 3: a.pdf, Page 1] for details.", [3]),
    ("According to Doc 2 the limit rose.", [2]),
    ("Both say so [Doc 1, Doc 2].", [1, 2]),
    ("Both say so [Doc 2][Doc 1].", [2, 1]),
    ("Lists [Doc 1, 3] and [Docs 2 and 4].", [1, 3, 2, 4]),
    ("document 2 and doc3 and DOC 1", [2, 3, 1]),
    ("Out of range [Doc 0] [Doc 9] then [Doc 2].", [2]),
    ("Repeated [Doc 2] [Doc 2] [Doc 1].", [2, 1]),
    ("Doc 2, 3 children are eligible.", [2]),  # a bare number outside brackets is not a citation
    ("No citation at all, 3 children.", []),
])
def test_cited_numbers(answer: str, numbers: list[int]) -> None:
    assert cited_numbers(answer, n_docs=4) == numbers


def test_extract_sources_only_cited_in_citation_order() -> None:
    assert extract_sources("B [Doc 2], then A [Doc 1].", NODES) == [
        Source("b.pdf", 2, None), Source("a.pdf", 1, "https://x/a.pdf"),
    ]


def test_extract_sources_dedupes_filename_and_page() -> None:
    assert extract_sources("[Doc 4] and [Doc 1]", NODES) == [Source("a.pdf", 1, None)]


def test_extract_sources_without_citation_is_empty() -> None:
    # an answer that cites nothing must not look cited: the retrieved sources are kept apart
    assert extract_sources("The limit is $4,106.", NODES) == []
    assert extract_sources("Only [Doc 7], out of range.", NODES) == []


def test_extract_sources_of_nothing() -> None:
    assert extract_sources("anything [Doc 1]", []) == []


def test_build_context_fills_in_rank_order_and_keeps_headers(scripted) -> None:
    big = [node(f"f{i}.pdf", i, "word " * 300) for i in (1, 2, 3)]
    assert build_context(big) == (format_context(big), 3)  # no LLM: nothing is cut
    text, used = build_context(big, scripted(context_window=1200), "q")
    assert used == 2 and text.startswith(format_context(big[:1]) + "\n\n[Doc 2: f2.pdf, Page 2]\nword")
    assert text.endswith(" …") and "[Doc 3" not in text
    assert build_context(big, scripted(context_window=200), "q") == ("[Doc 1: f1.pdf, Page 1] …", 1)


def test_structured_answer_renders_citations_in_the_shared_format() -> None:
    from rag_lab.answer.prompt import render_structured_answer

    reply = '{"answer": "The limit is $4,106.", "cited": [2, 9, 2, 1]}'
    text = render_structured_answer(reply, NODES)
    assert text == "The limit is $4,106. [Doc 2: b.pdf, Page 2] [Doc 1: a.pdf, Page 1]"  # 9 is out of range
    assert extract_sources(text, NODES) == [Source("b.pdf", 2), Source("a.pdf", 1, "https://x/a.pdf")]
    assert render_structured_answer(f'{{"answer": "{NO_ANSWER}.", "cited": [1]}}', NODES) == f"{NO_ANSWER}."
    assert render_structured_answer('{"answer": "cut off by the token bud', NODES) == "cut off by the token bud"
    assert render_structured_answer("not json at all", NODES) == "not json at all"
