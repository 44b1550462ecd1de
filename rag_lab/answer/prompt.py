"""The ONE answer prompt every mode shares (engines and the agent), and citation parsing.

Chunks are numbered in prompt order as ``[Doc N: filename, Page X]``; the model is asked to
answer only from them and cite ``[Doc N]``. :func:`extract_sources` maps the citations in an
answer back to the chunks, so every mode reports sources the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from llama_index.core.prompts import PromptTemplate
from llama_index.core.schema import MetadataMode, NodeWithScore

from rag_lab.answer.types import Source

NO_ANSWER = "I couldn't find information about that"

ANSWER_PROMPT_TMPL = (
    "Answer the question using only the numbered documents below.\n"
    "Cite the documents you use with their number, for example [Doc 1] or [Doc 2].\n"
    f"If the documents do not contain the answer, reply: {NO_ANSWER}.\n\n"
    "{context_str}\n\n"
    "Question: {query_str}\n"
    "Answer: "
)
ANSWER_PROMPT = PromptTemplate(ANSWER_PROMPT_TMPL)

# The same task for LLMs with constrained output (the local models): the reply is JSON, so the
# citation is a field the model must fill, not a format example it may copy instead of answering
# (Qwen2.5 answered just "[Doc 1]" to the text prompt). Full sentences that restate the question:
# Qwen2.5-Coder-1.5B answered bare figures ("4,106") otherwise; key-fact recall on a dev split of
# texas_childcare_full (20 questions outside the model bench's) 0.48 → 0.55. Rendered to the text form by
# :func:`render_structured_answer`, so sources are parsed the same way in every mode.
ANSWER_JSON_PROMPT_TMPL = (
    "Answer the question using only the numbered documents below.\n"
    'Reply in JSON with two fields: "answer", a complete answer in one or two full sentences that '
    "restate what the question asks about, with the exact figures (with their $ or % signs), names or "
    'dates from the documents, and "cited", the numbers of the documents the answer comes from.\n'
    f"If the documents do not contain the answer, the answer is: {NO_ANSWER}.\n\n"
    "{context_str}\n\n"
    "Question: {query_str}\n"
)
ANSWER_JSON_PROMPT = PromptTemplate(ANSWER_JSON_PROMPT_TMPL)
# maxLength: a small model that starts a run-away list of numbers ("1,534,154,214,…") is cut at a
# few sentences by the grammar instead of generating until max_tokens (≈ 40 s on two cores).
ANSWER_MAX_CHARS = 400
ANSWER_SCHEMA: dict = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": ANSWER_MAX_CHARS},
                   "cited": {"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": 5}},
    "required": ["answer", "cited"],
    "additionalProperties": False,  # else the grammar lets a small model invent keys until max_tokens
}

# "Doc 3", "[Doc 3]", "[Doc 3: file, Page 1]", "Document 3", "doc3": the number right after "Doc".
_SINGLE = re.compile(r"\bdoc(?:ument)?s?\.?\s*#?\s*(\d+)", re.IGNORECASE)
# "[Doc 1, 2]", "[Docs 1, 2 and 3]": bare numbers count only inside a bracket that starts with Doc
# (outside brackets "Doc 2, 3 children" would cite a Doc 3 that was never meant).
_BRACKET_LIST = re.compile(r"\[\s*docs?\.?\s*(\d+(?:\s*(?:,|;|and|&)\s*\d+)+)\s*\]", re.IGNORECASE)


def doc_header(number: int, result: NodeWithScore) -> str:
    """``[Doc N: filename, Page X]``; the page part is left out when the chunk has none."""
    meta = result.node.metadata
    filename = meta.get("filename") or meta.get("doc_id") or "unknown"
    page = meta.get("page")
    return f"[Doc {number}: {filename}" + (f", Page {page}]" if page is not None else "]")


def format_context(nodes: Sequence[NodeWithScore]) -> str:
    """The numbered context block: a header line, then the chunk text, per chunk."""
    return "\n\n".join(format_chunk(i, r) for i, r in enumerate(nodes, start=1))


def format_chunk(number: int, result: NodeWithScore) -> str:
    # MetadataMode.NONE: filename and page are in the header already; the rest is noise.
    text = result.node.get_content(metadata_mode=MetadataMode.NONE).strip()
    # A contextual index built with --context-in-prompt shows the chunk's context under the header.
    context = result.node.metadata.get("chunk_context")
    if context and "chunk_context" not in result.node.excluded_llm_metadata_keys:
        return f"{doc_header(number, result)}\nContext: {context}\n{text}"
    return f"{doc_header(number, result)}\n{text}"


def cited_numbers(answer_text: str, n_docs: int) -> list[int]:
    """Doc numbers cited in ``answer_text``, in order of first citation, within 1..n_docs."""
    return [number for number in all_cited_numbers(answer_text) if 1 <= number <= n_docs]


def all_cited_numbers(answer_text: str) -> list[int]:
    """Every doc number cited in ``answer_text``, in order of first citation, also those of documents
    the prompt did not have ("[Doc 7]" of 2 chunks): a citation checker must count them as wrong."""
    found: list[tuple[int, int]] = []  # (position, number)
    for match in _SINGLE.finditer(answer_text):
        found.append((match.start(1), int(match.group(1))))
    for match in _BRACKET_LIST.finditer(answer_text):
        for number in re.finditer(r"\d+", match.group(1)):
            found.append((match.start(1) + number.start(), int(number.group())))
    numbers: list[int] = []
    for _, number in sorted(found):
        if number not in numbers:
            numbers.append(number)
    return numbers


def unique_sources(nodes: Iterable[NodeWithScore]) -> list[Source]:
    """One source per (filename, page), first occurrence wins (it keeps the URL it came with)."""
    seen: dict[tuple[str, int | None], Source] = {}
    for result in nodes:
        source = Source.from_node(result)
        seen.setdefault((source.doc, source.page), source)
    return list(seen.values())


def render_structured_answer(reply: str, nodes: Sequence[NodeWithScore]) -> str:
    """``{"answer": …, "cited": [N, …]}`` → ``answer [Doc N: file, Page X] …``; numbers outside
    1..len(nodes) are dropped; a reply that is not such JSON is returned as it is."""
    from rag_lab.models.llm.chatml_tools import parse_arguments

    data = parse_arguments(reply)
    answer = data.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        return reply.strip()
    answer = answer.strip()
    cited = data.get("cited") if isinstance(data.get("cited"), list) else []
    numbers: list[int] = []
    for value in cited:
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= len(nodes) and value not in numbers:
            numbers.append(value)
    if answer.rstrip(".") == NO_ANSWER or not numbers:
        return answer
    return f"{answer} " + " ".join(doc_header(n, nodes[n - 1]) for n in numbers)


def extract_sources(answer_text: str, nodes: Sequence[NodeWithScore]) -> list[Source]:
    """The documents the answer cites, in citation order; empty when it cites none (the
    retrieved ones are ``unique_sources(nodes)``: an answer keeps both, never one for the other)."""
    return unique_sources(nodes[n - 1] for n in cited_numbers(answer_text, len(nodes)))
