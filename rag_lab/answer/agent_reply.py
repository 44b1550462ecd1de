"""The agent's reply contract: the grounding system prompt and the ``ANSWER:``/``SOURCES:`` parser.

Citations use the engines' ``[Doc N]`` numbering (see :mod:`rag_lab.answer.prompt`), so sources
come out of the same :func:`cited_numbers` / :func:`unique_sources` as in every other mode.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from llama_index.core.schema import NodeWithScore

from rag_lab.answer.agent_tool import TOOL_NAME
from rag_lab.answer.prompt import NO_ANSWER, cited_numbers, unique_sources
from rag_lab.answer.types import Source

SYSTEM_PROMPT = (
    "You answer questions about a collection of documents.\n"
    f"Call {TOOL_NAME} with a short search query to get numbered document chunks; call it again with "
    "another query only if the results are not enough.\n"
    "Answer only from the retrieved chunks and cite them as [Doc N]. Do not invent facts.\n"
    f"If the chunks do not contain the answer, reply: {NO_ANSWER}.\n"
    "Write the final reply in this format:\n"
    "ANSWER: <the answer, with [Doc N] citations>\n"
    "SOURCES: <the [Doc N] you used, e.g. [Doc 1], [Doc 3]>"
)

# A section marker at the start of a line in any case ("**Answer:**", "## Sources:"), or in
# capitals anywhere ("… [Doc 1] SOURCES: [Doc 1]" on one line).
_LINE = r"(?im:^[ \t*#>_]*{word}[ \t*_]*:[ \t*_]*)"
_INLINE = r"\b{upper}[ \t]*:[ \t*_]*"
_ANSWER = re.compile(_LINE.format(word="answer") + "|" + _INLINE.format(upper="ANSWER"))
_SOURCES = re.compile(_LINE.format(word="sources?") + "|" + _INLINE.format(upper="SOURCES?"))
# A tool call written out as text instead of made (tiny models imitate how past calls render).
_LEAKED_CALL = re.compile(r"^\s*(?:functions\.[\w.-]+\s*:|</?tool_call>|\{\s*\"(?:name|query)\"\s*:)")


@dataclass(frozen=True)
class Reply:
    answer: str
    sources_text: str  # what followed SOURCES: ("" when absent)
    formatted: bool  # the model used the ANSWER/SOURCES format
    usable: bool = True  # False: blank or a leaked tool call; the answer is then NO_ANSWER


def parse_reply(text: str) -> Reply:
    """Split a final reply; a reply that ignores the format is the answer as a whole."""
    text = (text or "").strip()
    answer_mark = _ANSWER.search(text)
    start = answer_mark.end() if answer_mark else 0
    sources_mark = _SOURCES.search(text, start)
    if answer_mark is None and sources_mark is None:
        reply = Reply(text, "", False)
    else:
        end = sources_mark.start() if sources_mark else len(text)
        answer = text[start:end].strip() or text  # "ANSWER:" with nothing after it: keep everything
        reply = Reply(answer, text[sources_mark.end():].strip() if sources_mark else "", True)
    if not reply.answer or _LEAKED_CALL.match(reply.answer):
        return Reply(NO_ANSWER, "", reply.formatted, usable=False)
    return reply


def reply_sources(reply: Reply, nodes: Sequence[NodeWithScore]) -> list[Source]:
    """Cited chunks ([Doc N] in the answer or SOURCES, or a retrieved file named in SOURCES);
    empty when nothing is cited."""
    numbers = cited_numbers(f"{reply.answer}\n{reply.sources_text}", len(nodes))
    lowered = reply.sources_text.lower()
    for number, result in enumerate(nodes, start=1):
        filename = str(result.node.metadata.get("filename") or "")
        if filename and filename.lower() in lowered and number not in numbers:
            if not any(nodes[n - 1].node.metadata.get("filename") == filename for n in numbers):
                numbers.append(number)  # the file's first chunk; its page is the best we know
    return unique_sources(nodes[n - 1] for n in numbers)
