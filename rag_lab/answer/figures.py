"""Figures copied, never invented: an answer may state only the figures its evidence states.

A *figure* is a domain term of the sparse tokenizer (:func:`rag_lab.tokenizer.iter_terms`): a money
amount, a percentage, a number (counts, years, dates' digits) or a code with digits (``BCY 2026``).
Figures are compared by value, not by spelling: ``$4,106`` is stated by a table cell ``4,106`` and
``BCY 2026`` by ``BCY-26``.

Two guards use them: :func:`figure_pattern`, a regular expression for the answer string of the
JSON schema the local model decodes under (digits, ``$`` and ``%`` can only be written as one of
the evidence's or the question's figures, as they are written there), and :func:`check_answer`,
which runs after decoding whatever the decoder allowed: an answer stating a figure that neither its
evidence nor the question states is replaced by its evidence lines, quoted. Each figure the final
answer states keeps the evidence line it came from (:class:`FigureCitation`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_lab.answer.evidence import Evidence
from rag_lab.tokenizer import Term, amount_of, full_year, iter_terms

_CODE_YEAR = re.compile(r"^(?:bcy|ffy|sfy|fy|py)(\d{2})$")
# A figure as written: money, a percentage, a program-year code, a number (never a trailing comma).
_AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_WRITTEN = re.compile(rf"[$€£]\s?(?:{_AMOUNT})|(?:{_AMOUNT})\s?%|\b(?:BCY|FFY|SFY|FY|PY)[- ]?\d{{2,4}}\b"
                      rf"|\b[A-Za-z]{{1,10}}-?\d+[A-Za-z0-9]*\b|(?:{_AMOUNT})")
_FREE_CHAR = r'[^0-9$€£%"\\\n]'
# "[Doc 2: file.pdf, Page 3]": a citation's numbers and file name are no figures of the answer
_CITATION = re.compile(r"\[\s*docs?\b[^\]]*\]", re.IGNORECASE)


def figure_values(term: Term) -> set[str]:
    """The values a figure states: a money amount also as its bare number, a program year also as its year."""
    values = {term.text}
    if (amount := amount_of(term)) is not None:
        values.add(amount)
    if term.kind == "code" and (match := _CODE_YEAR.match(term.text)):
        values.add(str(full_year(match.group(1))))
    return values


def figures(text: str) -> list[Term]:
    """The figures ``text`` states, in order, each once (citation markers left out)."""
    seen: dict[str, Term] = {}
    for term in iter_terms(_CITATION.sub(" ", text or "")):
        if term.is_domain:
            seen.setdefault(term.text, term)
    return list(seen.values())


def stated_values(text: str) -> set[str]:
    return {value for term in figures(text) for value in figure_values(term)}


def is_stated(term: Term, values: set[str]) -> bool:
    return bool(figure_values(term) & values) or (term.kind == "number" and f"dollar_{term.text}" in values)


def unsupported(answer: str, evidence: Sequence[Evidence], question: str = "") -> list[str]:
    """The figures of ``answer`` that neither ``evidence`` nor ``question`` states (normalised names)."""
    values = stated_values(question)
    for item in evidence:
        values |= stated_values(item.text)
    return [term.text for term in figures(answer) if not is_stated(term, values)]


@dataclass(frozen=True)
class FigureCitation:
    """A figure of the answer and the evidence line that states it."""

    figure: str
    doc: int
    first_line: int
    last_line: int
    text: str

    def to_dict(self) -> dict:
        return {"figure": self.figure, "doc": self.doc, "first_line": self.first_line,
                "last_line": self.last_line, "text": self.text}


def cite_figures(answer: str, evidence: Sequence[Evidence], question: str = "") -> list[FigureCitation]:
    """Each figure of ``answer`` (those the question states left out) with the first evidence unit stating it."""
    asked = stated_values(question)
    citations: list[FigureCitation] = []
    for term in figures(answer):
        if is_stated(term, asked):
            continue
        source = next((item for item in evidence if is_stated(term, stated_values(item.text))), None)
        if source is not None:
            citations.append(FigureCitation(term.text, source.doc, source.first, source.last, source.text))
    return citations


def written_figures(texts: Sequence[str]) -> list[str]:
    """Every figure as ``texts`` write it (``$4,106``, ``85%``, ``BCY 2026``, ``2,053``), longest first."""
    found = {match.group(0) for text in texts for match in _WRITTEN.finditer(text or "") if any(c.isdigit() for c in match.group(0))}
    return sorted(found, key=lambda figure: (-len(figure), figure))


def figure_pattern(texts: Sequence[str]) -> str:
    """A regular expression for an answer in which digits, currency and ``%`` signs appear only inside
    a figure ``texts`` write (and quotes and backslashes not at all, so it needs no JSON escaping)."""
    allowed = "|".join(re.escape(figure) for figure in written_figures(texts))
    return f"^(?:{_FREE_CHAR}|{allowed})*$" if allowed else f"^{_FREE_CHAR}*$"


def quote_evidence(evidence: Sequence[Evidence]) -> str:
    """The evidence itself as the answer: each unit quoted with its line citation."""
    return " ".join(f"“{item.text}” {item.citation()}" for item in evidence)


def check_answer(answer: str, evidence: Sequence[Evidence], question: str = "",
                 fallback: Sequence[Evidence] | None = None) -> tuple[str, bool]:
    """``(answer, rebuilt)``: ``answer`` unchanged when every figure it states is stated by ``evidence``
    or the question, else the quoted ``fallback`` units (default: all of ``evidence``)."""
    if not unsupported(answer, evidence, question):
        return answer, False
    return quote_evidence(fallback if fallback else evidence), True
