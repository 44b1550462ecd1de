"""The evidence-first answer (``answer_style = "evidence"``, the default for the local models).

Instead of whole or compressed chunks, the model reads a few evidence units chosen by retrieval-grade
scorers (:mod:`rag_lab.answer.evidence`), numbered ``[1]``…``[k]``; a short prompt and a short
reply keep an answer within seconds on two cores. Decoding is held to a JSON schema whose answer
string may write digits, ``$`` and ``%`` only as figures the evidence or the question writes
(:func:`rag_lab.answer.figures.figure_pattern`), and the reply is checked after decoding
(:func:`rag_lab.answer.figures.check_answer`): an answer stating a figure no evidence states is
replaced by the evidence it should have copied, quoted.

The answer text is the model's sentence followed by the evidence units stating its figures (those it
cites when it states none; at most :data:`MAX_QUOTED`), each quoted with the line before and the line
after it in its chunk (:data:`QUOTE_CONTEXT_LINES`; a table row alone) and its ``[Doc N: file, Page X, lines
L-M]`` citation, so that every figure a reader sees sits next to the line it came from, in context; every
figure also keeps its own line in the answer's ``figure_citations``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from llama_index.core.llms.llm import LLM
from llama_index.core.schema import NodeWithScore

from rag_lab.answer.evidence import DEFAULT_EVIDENCE_UNITS, Evidence, chunk_lines, select_evidence
from rag_lab.answer.figures import FigureCitation, check_answer, cite_figures, figure_pattern
from rag_lab.answer.prompt import NO_ANSWER

EVIDENCE_PROMPT_TMPL = (
    "Answer the question using only the numbered evidence lines below.\n"
    "State the figures that answer it (amounts, counts, dates, percentages, years), each copied exactly as "
    "a line writes it, and no other figure. If the question asks for several items, list every matching "
    "line's item with its figure.\n"
    'Reply in JSON with two fields: "answer", one full sentence that restates what the question '
    'asks about and gives its figures, and "lines", the numbers of the evidence lines those figures come from.\n'
    f"If the lines do not contain the answer, the answer is: {NO_ANSWER}.\n\n"
    "{evidence}\n\n"
    "Question: {question}\n"
)
EVIDENCE_ANSWER_MAX_CHARS = 300


def resolve_answer_style(setting: str, llm) -> str:
    """``evidence`` or ``free``: the setting, or for ``auto`` evidence with a local model (an LLM whose
    decoding a schema constrains) and free answers with any other (the cloud generators)."""
    if setting != "auto":
        return setting
    return "evidence" if getattr(llm, "supports_constrained_output", False) else "free"


@dataclass
class EvidenceAnswer:
    text: str  # rendered: sentence, then the quoted cited lines with their citations
    sentence: str  # the model's sentence (or the quoted evidence when it was rebuilt)
    evidence: list[Evidence]
    cited: list[int] = field(default_factory=list)  # 1-based evidence numbers the model cited
    figure_citations: list[FigureCitation] = field(default_factory=list)
    rebuilt: bool = False  # the model's sentence stated a figure no evidence states


def evidence_block(evidence: Sequence[Evidence]) -> str:
    return "\n".join(f"[{n}] {item.text}" for n, item in enumerate(evidence, start=1))


def evidence_schema(evidence: Sequence[Evidence], question: str) -> dict:
    """The reply's schema: its answer may write only the evidence's and the question's figures."""
    pattern = figure_pattern([question, *(item.text for item in evidence)])
    return {
        "type": "object",
        "properties": {"answer": {"type": "string", "pattern": pattern},
                       "lines": {"type": "array", "items": {"type": "integer", "minimum": 1,
                                                            "maximum": max(1, len(evidence))},
                                 "maxItems": max(1, len(evidence))}},
        "required": ["answer", "lines"],
        "additionalProperties": False,
    }


def line_citation(item: Evidence, nodes: Sequence[NodeWithScore]) -> str:
    """``[Doc N: file, Page X, line L]`` (``lines a-b`` for a window)."""
    from rag_lab.answer.prompt import doc_header

    return doc_header(item.doc, nodes[item.doc - 1])[:-1] + f", {item.lines_label}]"


def render(sentence: str, quoted: Sequence[Evidence], nodes: Sequence[NodeWithScore]) -> str:
    """The sentence, then each quoted unit with its line citation (the citations name [Doc N])."""
    parts = [sentence.strip()]
    parts += [f"“{item.text}” {line_citation(item, nodes)}" for item in quoted]
    return "\n".join(part for part in parts if part)


def parse_reply(reply: str, n_evidence: int) -> tuple[str, list[int]]:
    from rag_lab.models.llm.chatml_tools import parse_arguments

    data = parse_arguments(reply)
    sentence = data.get("answer") if isinstance(data.get("answer"), str) else reply
    lines = data.get("lines") if isinstance(data.get("lines"), list) else []
    cited: list[int] = []
    for value in lines:
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= n_evidence and value not in cited:
            cited.append(value)
    return sentence.strip(), cited


MAX_QUOTED = 3
# Lines of its chunk shown before and after each quoted unit: on the dev split's 60 answers the same
# sentences quoted so stated +0.08 [+0.04, +0.13] of the reference's key facts, precision 0.25 → 0.22
# (benchmarks/evidence_quoting.py, docs/answering.md).
QUOTE_CONTEXT_LINES = 1


def _quoted(sentence: str, cited: Sequence[int], evidence: Sequence[Evidence], question: str) -> list[Evidence]:
    """The units quoted under the answer: the lines its sentence uses — those stating the sentence's
    figures, or, for a sentence stating none, those the model cited —, at most MAX_QUOTED; the best unit
    when there are none. A cited line stating none of the sentence's figures is not quoted: it supports
    nothing the sentence says (a Family Size 1 row beside the Family Size 5 one)."""
    stating = [item for item in evidence if any(c.doc == item.doc and c.first_line == item.first
                                                for c in cite_figures(sentence, evidence, question))]
    chosen = stating or [evidence[n - 1] for n in cited]
    return chosen[:MAX_QUOTED] or list(evidence[:1])


@dataclass(frozen=True)
class Quote:
    """A quoted unit in context: ``shown`` (the unit with its neighbouring lines) and ``parts`` (each of
    those lines, the unit as one part), for citing a figure to the line stating it."""

    shown: Evidence
    parts: list[Evidence]


def in_context(quoted: Sequence[Evidence], nodes: Sequence[NodeWithScore], question: str,
               lines: int = QUOTE_CONTEXT_LINES) -> list[Quote]:
    """Each quoted unit with up to ``lines`` lines before and after it in its chunk, never a line another
    quoted unit holds (or its context took already); a table row stays alone (its neighbours are other
    rows, answering other questions)."""
    from rag_lab.ingest.tables import parse_row

    taken = {(item.doc, j) for item in quoted for j in range(item.first, item.last + 1)}
    quotes = []
    for item in quoted:
        if lines <= 0 or parse_row(item.text) is not None:
            quotes.append(Quote(item, [item]))
            continue
        chunk = chunk_lines(nodes[item.doc - 1])  # 1-based line j is chunk[j - 1]

        def free(j: int) -> bool:  # a bare row's text holds its header line already: no gain in adding it
            return 1 <= j <= len(chunk) and (item.doc, j) not in taken and chunk[j - 1] not in item.text

        before = list(itertools.takewhile(free, range(item.first - 1, item.first - 1 - lines, -1)))[::-1]
        after = list(itertools.takewhile(free, range(item.last + 1, item.last + 1 + lines)))
        taken |= {(item.doc, j) for j in before + after}
        parts = [Evidence(item.doc, j, j, chunk[j - 1], item.score) for j in before] + [item] + \
                [Evidence(item.doc, j, j, chunk[j - 1], item.score) for j in after]
        shown = Evidence(item.doc, parts[0].first, parts[-1].last, " ".join(part.text for part in parts), item.score)
        quotes.append(Quote(shown, parts))
    return quotes


def answer_from_evidence(llm: LLM, question: str, nodes: Sequence[NodeWithScore], *, embed_model=None,
                         max_units: int = DEFAULT_EVIDENCE_UNITS, structured: bool = True) -> EvidenceAnswer:
    """Select the evidence of ``nodes`` for ``question``, have ``llm`` answer from it, check its figures."""
    evidence = select_evidence(nodes, question, max_units, embed_model=embed_model)
    if not evidence:
        return EvidenceAnswer(NO_ANSWER, NO_ANSWER, [])
    prompt = EVIDENCE_PROMPT_TMPL.format(evidence=evidence_block(evidence), question=question)
    if structured:
        reply = llm.complete(prompt, json_schema=evidence_schema(evidence, question),
                             max_tokens=160).text
    else:
        reply = llm.complete(prompt).text
    sentence, cited = parse_reply(reply, len(evidence))
    sentence = sentence[:EVIDENCE_ANSWER_MAX_CHARS]
    refused = sentence.rstrip(".") == NO_ANSWER
    sentence, rebuilt = check_answer(sentence, evidence, question, fallback=_quoted(sentence, cited, evidence, question))
    if rebuilt:  # the quoted evidence is the answer now
        quoted, sentence = _quoted("", cited, evidence, question), ""
    else:
        quoted = [] if refused else _quoted(sentence, cited, evidence, question)
    quotes = in_context(quoted, nodes, question)
    text = render(sentence, [quote.shown for quote in quotes], nodes) or NO_ANSWER
    stated = " ".join([sentence, *(quote.shown.text for quote in quotes)])
    parts = [part for quote in quotes for part in quote.parts]
    citations = cite_figures(stated, parts + [item for item in evidence if item not in quoted], question)
    return EvidenceAnswer(text, sentence, evidence, cited, citations, rebuilt)


def checked_answer(answer: str, question: str, nodes: Sequence[NodeWithScore], *, embed_model=None,
                   max_units: int = DEFAULT_EVIDENCE_UNITS) -> EvidenceAnswer:
    """An answer written from whole chunks (the agent's) held to the same rule: a figure no line of
    ``nodes`` states makes the answer the evidence selected from them, quoted. Its figures are cited
    to the selected evidence first, then to any line of the chunks."""
    evidence = select_evidence(nodes, question, max_units, embed_model=embed_model)
    if not evidence:
        return EvidenceAnswer(answer, answer, [])
    every_line = [Evidence(doc, j, j, line, 0.0) for doc, node in enumerate(nodes, start=1)
                  for j, line in enumerate(chunk_lines(node), start=1)]
    checked, rebuilt = check_answer(answer, every_line, question, fallback=evidence[:2])
    text = render("", evidence[:2], nodes) if rebuilt else answer
    stated = " ".join(item.text for item in evidence[:2]) if rebuilt else answer
    return EvidenceAnswer(text, checked, evidence, [], cite_figures(stated, evidence + every_line, question), rebuilt)
