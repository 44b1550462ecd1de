"""Citation correctness: does chunk N support the sentence that cites ``[Doc N]``?

Offline check: the citing sentence's key facts (numbers, money, percentages, codes — see
:mod:`rag_lab.evaluate.facts.key_facts`) must appear in the cited chunk. A sentence citing one
document is supported when that chunk states all its facts; a sentence citing several is checked
jointly (each cited chunk must state at least one fact, together all of them). Sentences with no
key facts cannot be checked offline: they are counted as ``unverifiable``, never as correct. A
citation of a document the prompt did not have ("[Doc 7]" of 2 chunks) is wrong whatever its sentence
states: it is checked and never correct.

Quoted evidence is no sentence of the answer (:mod:`rag_lab.answer.statements`): a quote's citation
cites the statement the quote stands under, and is checked against that statement's facts. The
citations of an answer with no statement (quotes only) support nothing: unverifiable, with their count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag_lab.answer.prompt import all_cited_numbers, cited_numbers
from rag_lab.answer.statements import statement_text
from rag_lab.evaluate.facts.key_facts import CITATION_MARKER, _is_stated, stated_values
from rag_lab.tokenizer import iter_terms

_LEADING = re.compile(rf"^\s*(?:(?:{CITATION_MARKER.pattern})\s*[.,;:]?\s*)+", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")


@dataclass
class CitedClaim:
    sentence: str  # the sentence without its citation markers
    docs: list[int]  # the [Doc N] numbers it cites (of documents the prompt had)
    facts: list[str]
    correct: list[int] = field(default_factory=list)  # cited docs that support it
    missing: list[int] = field(default_factory=list)  # cited numbers of no document in the prompt (wrong)

    @property
    def verifiable(self) -> bool:
        return bool(self.facts)


@dataclass
class CitationCheck:
    claims: list[CitedClaim]
    cites_anything: bool  # cites a document the prompt had

    @property
    def checked(self) -> int:
        """Citations that could be checked: those whose sentence states key facts, and every
        citation of a missing document (wrong, whatever its sentence)."""
        return sum(len(c.docs) for c in self.claims if c.verifiable) + self.missing

    @property
    def missing(self) -> int:
        """Citations of documents the prompt did not have."""
        return sum(len(c.missing) for c in self.claims)

    @property
    def correct(self) -> int:
        return sum(len(c.correct) for c in self.claims if c.verifiable)

    @property
    def unverifiable(self) -> int:
        return sum(len(c.docs) for c in self.claims if not c.verifiable)

    @property
    def precision(self) -> float | None:
        """Correct citations / checkable citations; None when nothing could be checked."""
        return self.correct / self.checked if self.checked else None


def check_citations(answer: str, chunk_texts: list[str]) -> CitationCheck:
    """Check each ``[Doc N]`` of ``answer`` against ``chunk_texts[N-1]`` (prompt order); the citation
    of a quote cites the statement above it."""
    raw_claims = split_claims(statement_text(answer), len(chunk_texts))
    stated = [stated_values(text) for text in chunk_texts]
    for claim in raw_claims:
        if not claim.verifiable:
            continue
        terms = {t.text: t for t in iter_terms(claim.sentence) if t.is_domain}
        by_doc = {n: {f for f, term in terms.items() if _is_stated(term, stated[n - 1])} for n in claim.docs}
        if len(claim.docs) == 1:
            claim.correct = [n for n in claim.docs if by_doc[n] == set(terms)]
        else:
            union = set().union(*by_doc.values())
            claim.correct = [n for n in claim.docs if by_doc[n]] if union == set(terms) else []
    return CitationCheck(raw_claims, cites_anything=bool(cited_numbers(answer or "", len(chunk_texts))))


def split_claims(answer: str, n_docs: int) -> list[CitedClaim]:
    """Sentences that cite at least one document. Citations at the start of a sentence
    ("… is $4,106. [Doc 1] Parents …") belong to the sentence before it."""
    claims: list[CitedClaim] = []
    previous: CitedClaim | None = None
    for raw in _SENTENCE_END.split(answer or ""):
        lead = _LEADING.match(raw)
        if lead and previous is not None:
            for number in all_cited_numbers(lead.group(0)):
                listed = previous.docs if 1 <= number <= n_docs else previous.missing
                if number not in listed:
                    listed.append(number)
            if (previous.docs or previous.missing) and previous not in claims:
                claims.append(previous)
            raw = raw[lead.end():]
        numbers = all_cited_numbers(raw)
        text = CITATION_MARKER.sub(" ", raw).strip()
        if not re.search(r"\w", text):
            if numbers and previous is None:  # citations under no statement: nothing they could support
                claims.append(CitedClaim("", [n for n in numbers if 1 <= n <= n_docs], [],
                                         missing=[n for n in numbers if not 1 <= n <= n_docs]))
            continue
        facts = sorted({t.text for t in iter_terms(text) if t.is_domain})
        previous = CitedClaim(text, [n for n in numbers if 1 <= n <= n_docs], facts,
                              missing=[n for n in numbers if not 1 <= n <= n_docs])
        if numbers:
            claims.append(previous)
    return claims
