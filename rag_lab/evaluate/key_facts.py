"""Key facts: the numbers, money amounts, percentages and codes a text states.

They are the sparse tokenizer's domain terms (``rag_lab.tokenizer``), so ``$4,106``,
``$4106`` and ``4,106 dollars`` are one fact, as are ``BCY-26`` and ``BCY 2026``.

Two answer metrics are built on them, both blind to what the question already says (echoing
"a family of 5 in BCY 2026" back is not an answer) and to citation markers (``[Doc 1: bcy-26….pdf,
Page 1]`` states neither BCY 26 nor 1):

- **key-fact recall**: the share of the reference answer's facts that the answer states. Facts the
  question states are not counted; a reference whose facts are *all* in the question ("Is the limit
  $4,106?" — "Yes, $4,106") has no key fact left to check: recall is undefined (None), never 1.0 for
  an echo of the question.
- **key-fact precision**: the share of the answer's own facts (those the question does not state)
  that the reference states; None when the answer states none. An answer listing every number of
  its context keeps recall 1.0 but loses precision; a correct figure plus a wrong one scores 0.5.
"""

from __future__ import annotations

import re

from rag_lab.tokenizer import Term, amount_of, iter_terms

# "[Doc 2]", "[Doc 2: file.pdf, Page 3]", "[Docs 1, 2]", "(Doc 1)", "Doc 1": citation markers, removed
# before an answer's facts are read (their numbers and file names are not claims).
CITATION_MARKER = re.compile(r"[\[(]\s*docs?\b[^\])]*[\])]|\bdoc(?:ument)?s?\.?\s*#?\s*\d+", re.IGNORECASE)


def strip_citations(text: str) -> str:
    return CITATION_MARKER.sub(" ", text or "")


def extract_key_facts(text: str) -> set[str]:
    """The normalised domain terms of ``text`` (``{"dollar_4106", "percent_85", "bcy26", "5"}``)."""
    return set(_facts(text))


def _facts(text: str) -> dict[str, Term]:
    return {term.text: term for term in iter_terms(text or "") if term.is_domain}


def stated_values(text: str) -> set[str]:
    """What ``text`` states (its domain terms), with each money amount also as its bare number."""
    values: set[str] = set()
    for term in iter_terms(text or ""):
        if term.is_domain:
            values.add(term.text)
            if (amount := amount_of(term)) is not None:
                values.add(amount)
    return values


def _is_stated(fact: Term, stated: set[str]) -> bool:
    # Money and plain numbers are interchangeable ("$4,106" is stated by a table row "4,106" and
    # "4,106" by "$4,106"); percentages and codes only by themselves.
    if fact.text in stated:
        return True
    if fact.kind == "money":
        return amount_of(fact) in stated
    if fact.kind == "number":
        return any(value.endswith(f"_{fact.text}") for value in stated if value.startswith(("dollar_", "euro_", "pound_")))
    return False


def _facts_not_asked(text: str, question: str | None) -> dict[str, Term]:
    asked = stated_values(question or "")
    return {name: term for name, term in _facts(text).items() if not _is_stated(term, asked)}


def answer_facts(text: str, question: str | None = None) -> dict[str, Term]:
    """The key facts ``text`` states that ``question`` does not (citation markers ignored)."""
    return _facts_not_asked(strip_citations(text), question)


def reference_facts(reference: str, question: str | None = None) -> dict[str, Term]:
    """The reference's key facts that ``question`` does not state: what an answer must add."""
    return _facts_not_asked(reference, question)


def has_key_facts(reference: str, question: str | None = None) -> bool:
    """Is key-fact recall defined: does the reference state a fact the question does not?"""
    return bool(reference_facts(reference, question))


def key_fact_recall(answer: str, reference: str, question: str | None = None) -> float | None:
    """Share of ``reference``'s key facts, less those ``question`` states, that ``answer`` states;
    None when the reference has none left."""
    facts = reference_facts(reference, question)
    if not facts:
        return None
    stated = stated_values(strip_citations(answer))
    return sum(_is_stated(fact, stated) for fact in facts.values()) / len(facts)


def key_fact_precision(answer: str, reference: str, question: str | None = None) -> float | None:
    """Share of ``answer``'s key facts (less those ``question`` states) that ``reference`` states;
    None when the answer states none (a refusal, an echo of the question)."""
    facts = answer_facts(answer, question)
    if not facts:
        return None
    stated = stated_values(reference)
    return sum(_is_stated(fact, stated) for fact in facts.values()) / len(facts)


def missing_key_facts(answer: str, reference: str, question: str | None = None) -> list[str]:
    """The reference's key facts (less the question's) that ``answer`` does not state (failure analysis)."""
    stated = stated_values(strip_citations(answer))
    return sorted(text for text, fact in reference_facts(reference, question).items() if not _is_stated(fact, stated))


def reference_facts_stated(text_values: set[str], reference: str, question: str | None = None) -> tuple[list[str], int]:
    """``(stated, total)``: which of the reference's key facts (less the question's) a text states,
    given the text's :func:`stated_values` (computed once per long text), and how many there are."""
    facts = reference_facts(reference, question)
    return sorted(name for name, fact in facts.items() if _is_stated(fact, text_values)), len(facts)
