"""An answer's own statements, apart from the evidence it quotes.

An evidence-first answer is the model's sentence followed by the lines it rests on, each quoted and
cited (``“Income Eligibility Limits | Family Size 5 | … | Bi-Weekly: $4,106” [Doc 1: file.pdf, Page 1,
line 8]``, :func:`rag_lab.answer.evidence_answer.render`); a free answer may quote a line inline the
same way. A quote supports a statement, it does not make one: a row quoted under a wrong figure holds
the right figure, and an answer made only of quotes states nothing. Every answer measure reads
:func:`split_statements`'s ``statements``; an answer with none is a non-answer.

A quote is ``“…”`` (or ``"…"``) of four words or more followed by a ``[Doc N…]`` citation, or a whole
line opened by ``“`` (closed or cut). Quoted words inside a sentence ("the “Bi-Weekly” column", a
quoted name before its citation) stay part of the sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CITATION = r"\[\s*docs?\b[^\]]*\]"
# A cited quote anywhere (its citation kept: it cites the statement the quote supports), of four words or
# more: a quoted name ("Texas Rising Star" [Doc 1]) is part of the sentence.
_QUOTED_WORDS = r"[^\s\"”]+(?:[^\S\n]+[^\s\"”]+){3,}"
CITED_QUOTE = re.compile(rf"(?:“(?=[^”\n]*?{_QUOTED_WORDS})[^”\n]*”|\"(?=[^\"\n]*?{_QUOTED_WORDS})[^\"\n]*\")\s*(?={_CITATION})",
                         re.IGNORECASE)
# A line that is one quote, closed or cut ("“…0.000% FAMILY SIZE 2:” " or "“… FAMILY SIZE").
QUOTE_LINE = re.compile(r"^\s*(?:[-*•]\s*)?“(?:[^”\n]*”\s*|[^”\n]*$)", re.MULTILINE)
_CONTENT = re.compile(r"[^\W_]")  # a letter or digit of its own


@dataclass(frozen=True)
class Statements:
    """``statements``: the answer's own words, its citations kept, its quotes removed; ``quotes``:
    the quoted evidence, in order."""

    statements: str
    quotes: list[str] = field(default_factory=list)

    @property
    def is_non_answer(self) -> bool:
        """No statement: nothing but quotes and citations (or nothing at all)."""
        return not _CONTENT.search(re.sub(_CITATION, " ", self.statements, flags=re.IGNORECASE))


def split_statements(answer: str) -> Statements:
    """``answer``'s statements and its quoted evidence (see the module doc)."""
    quotes: list[str] = []

    def take(match: re.Match) -> str:
        quotes.append(match.group(0).strip())
        return " "

    text = CITED_QUOTE.sub(take, answer or "")
    text = QUOTE_LINE.sub(take, text)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return Statements("\n".join(line for line in lines if line), [q.strip("“”\" ") for q in quotes])


def statement_text(answer: str) -> str:
    """The answer's statements alone (quotes removed, citations kept): what every answer measure reads."""
    return split_statements(answer).statements


def is_non_answer(answer: str) -> bool:
    """Does ``answer`` state nothing of its own (quotes, citations, or nothing)?"""
    return split_statements(answer).is_non_answer
