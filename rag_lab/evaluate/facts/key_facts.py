"""Key facts: the numbers, money amounts, percentages and codes a text states.

They are the sparse tokenizer's domain terms (``rag_lab.tokenizer``), so ``$4,106``,
``$4106`` and ``4,106 dollars`` are one fact, as are ``BCY-26`` and ``BCY 2026``. Two more rules
make every way of writing a year one fact:

- **years**: a program-year code and a bare year state the same year (``FFY 2025``, ``FY2025``,
  ``fiscal year 2025`` and ``2025`` state 2025; ``BCY 2026`` = ``BCY-26`` = ``BCY26``). The code's
  prefix scopes the year; telling FFY from BCY apart is a judge's job, not a string match's.
- **year ranges** are one fact: ``2025-2027``, ``2025–2027``, ``2025 to 2027``, ``from FFY 2025
  through FFY 2027``, ``FY 2025-27`` and ``between 2025 and 2027`` are all ``years_2025_2027``. A
  range is stated only by the same range; its end years count as stated (an answer naming "2025 to
  2027" states 2025).

**Units and scales** are read before the terms (:func:`read_units`): "4,106 percent" is a
percentage (never the amount $4,106), "$1.2 million" is "$1,200,000" (thousand, million, billion),
and a fraction states the percentage it equals ("0.85" = "85%"); the figures are read as the judge
reads them (:mod:`rag_lab.evaluate.facts.figures`).

A **refusal** states nothing: a sentence (or a clause after "but"/"however"/";") that says the
answer is not known or not in the documents ("I do not know the limit for a family of 5 in BCY
2026", the prompt's "I couldn't find information about that") names what is not known, which is no
claim; its facts are dropped before an answer is scored (:func:`claimed_text`). A refusing clause
ends at the first comma after the refusal ("The documents do not specify a cap, the limit is $4,106"
claims $4,106). A pure refusal so earns recall 0 and has no precision (None); a hedged answer keeps
the facts of its other clauses, so a hedged figure ("I cannot confirm it, it may be $287") is a claim
and counts for precision.

An answer's **quoted evidence** is no claim: the scores read its statements
(:mod:`rag_lab.answer.statements`), so a wrong figure over a quoted row holding the right one scores as
the wrong figure, and an answer made only of quotes scores as a non-answer (recall 0, no precision).

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

import functools
import re

from rag_lab.answer.statements import statement_text
from rag_lab.evaluate.facts.figures import (NUMBER_LITERAL, PERCENT_SIGN, SCALE_WORD, YEAR, is_year, percent_share,
                                            scaled_number, share)
from rag_lab.tokenizer import (PROGRAM_YEAR_PHRASES, PROGRAM_YEAR_PREFIXES, Term, amount_of, full_year,
                               iter_terms)

# "[Doc 2]", "[Doc 2: file.pdf, Page 3]", "[Docs 1, 2]", "(Doc 1)", "Doc 1": citation markers, removed
# before an answer's facts are read (their numbers and file names are not claims).
CITATION_MARKER = re.compile(r"[\[(]\s*docs?\b[^\])]*[\])]|\bdoc(?:ument)?s?\.?\s*#?\s*\d+", re.IGNORECASE)


# A year range: two years joined by a dash, "to", "through", "thru" or "until" (or "between … and …"),
# each optionally written as a program year ("FFY 2025", "fiscal year 2025"); the end may be two digits
# after a dash ("FY 2025-27"), or both may be two-digit program years ("BCY 25-27").
_YEAR = YEAR
_PY_CODE = rf"\b(?i:{'|'.join(PROGRAM_YEAR_PREFIXES)})\s?-?\s?"
_PY_PHRASES = "|".join(p.replace(" ", r"\s+") for p in PROGRAM_YEAR_PHRASES)
_PY_WORDS = rf"\b(?i:{_PY_PHRASES})\s+(?i:years?)\s+(?:\([A-Za-z]{{2,3}}\)\s+)?"
_PREFIX = rf"(?:{_PY_CODE}|{_PY_WORDS})"
_DASH = r"\s*[-–—]\s*"
_WORD_TO = r"\s+(?i:to|through|thru|until)\s+"
YEAR_RANGE = re.compile(
    rf"""(?<![\w$€£.,/-])(?:
      {_PREFIX}?(?P<start>{_YEAR})(?:{_DASH}{_PREFIX}?(?P<end_dash>{_YEAR}|\d{{2}})|{_WORD_TO}{_PREFIX}?(?P<end_word>{_YEAR}))
    | {_PREFIX}(?P<start2>\d{{2}})(?:{_DASH}|{_WORD_TO}){_PREFIX}?(?P<end2>\d{{2}})
    | (?i:between)\s+{_PREFIX}?(?P<from>{_YEAR})\s+(?i:and)\s+{_PREFIX}?(?P<to>{_YEAR})
    )(?![\d%]|[.,]\d)""",
    re.VERBOSE,
)
_CODE_YEAR = re.compile(rf"^(?:{'|'.join(PROGRAM_YEAR_PREFIXES)})(\d{{2}})$")

# What a refusal says: the prompt's own reply (rag_lab.answer.prompt.NO_ANSWER, "I couldn't find
# information about that") and the usual ways a model says it does not know or the documents do not say.
_NOT = r"(?:do\s+not|don['’]t|did\s+not|didn['’]t|cannot|can\s*not|can['’]t|could\s+not|couldn['’]t|was\s+unable\s+to|am\s+unable\s+to|am\s+not\s+able\s+to)"
REFUSAL = re.compile(
    rf"""\b(?:
      i\s+{_NOT}\s+(?:know|find|answer|determine|tell|say|confirm|locate|provide|see|have\s+(?:enough\s+|any\s+|the\s+)?information)
    | i\s*(?:am|['’]m)\s+not\s+sure
    | (?:unable|not\s+able)\s+to\s+(?:answer|find|determine|locate|confirm|provide)
    | (?:context|documents?|sources?|passages?|excerpts?|information|texts?)\s+(?:provided\s+|given\s+|above\s+)?
      (?:does|do|did)\s*(?:n['’]t|\s+not)\s+(?:contain|provide|mention|say|state|specify|include|give|list|cover|answer|address)
    | (?:no|not\s+enough|insufficient)\s+information\s+(?:about|on|regarding|to|is|in|was|available)
    | (?:is|are)\s+not\s+(?:mentioned|provided|specified|stated|given|listed)\s+in\s+the\s+(?:context|documents?|sources?|provided|given)
    | cannot\s+be\s+(?:determined|answered)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# Sentences, and the clauses a hedge joins ("I don't know the monthly limit, but the bi-weekly one is …").
_CLAUSE = re.compile(r"(?<=[.!?])\s+|\n+|;\s*|,?\s+\b(?:but|however|although|though)\b,?\s*", re.IGNORECASE)


# Units the sparse tokenizer does not read (its terms must stay as they are for the index): a
# thousands-separated number before "percent"/"%", and scale words after an amount.
_SEPARATED_PERCENT = re.compile(rf"(?<![\d.,])(\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?)(?={PERCENT_SIGN})", re.IGNORECASE)
_SCALED = re.compile(rf"(?<![\d.,])(?P<currency>[$€£]\s?)?(?P<amount>{NUMBER_LITERAL})\s+(?P<scale>{SCALE_WORD})\b",
                     re.IGNORECASE)


def read_units(text: str) -> str:
    """``text`` with its units spelled the way the tokenizer reads them: "4,106 percent" →
    "4106 percent" (a percentage, not the number 4,106), "$1.2 million" → "$1200000"."""
    text = _SEPARATED_PERCENT.sub(lambda m: m.group(1).replace(",", ""), text or "")

    def scaled(match: re.Match) -> str:
        number = scaled_number(match["amount"], match["scale"])
        return match.group(0) if number is None else f"{(match['currency'] or '').strip()}{number}"

    return _SCALED.sub(scaled, text)


def _share_of(term: Term) -> str | None:
    """The share a fraction or a percentage states, ``share_0.85`` for "0.85" and for "85%"."""
    if term.kind == "percent":
        return percent_share(term.text.split("_", 1)[1])
    if term.kind == "number" and "." in term.text and term.text.count(".") == 1:
        return share(term.text)
    return None


def strip_citations(text: str) -> str:
    return CITATION_MARKER.sub(" ", text or "")


def is_refusal(text: str) -> bool:
    """Does ``text`` (a sentence or a clause) say the answer is not known or not in the documents?"""
    return bool(REFUSAL.search(text or ""))


def claimed_text(answer: str) -> str:
    """``answer`` without its citation markers and without the sentences and clauses that refuse
    (:data:`REFUSAL`): what it claims. Empty for a pure refusal."""
    clauses = _CLAUSE.split(strip_citations(answer))
    return " … ".join(claim for c in clauses if c and c.strip() for claim in _claims_of(c))


def _claims_of(clause: str) -> list[str]:
    """The parts of one clause that claim something: a refusal runs to the next comma after it."""
    match = REFUSAL.search(clause)
    if match is None:
        return [clause] if clause.strip() else []
    comma = clause.find(",", match.end())
    return [] if comma < 0 else _claims_of(clause[comma + 1:])


def year_ranges(text: str) -> tuple[list[tuple[int, int]], str]:
    """``([(start, end), …], rest)``: the year ranges ``text`` states and the text without them."""
    ranges: list[tuple[int, int]] = []

    def take(match: re.Match) -> str:
        g = match.groupdict()
        if g["start2"] is not None:
            start, end = full_year(g["start2"]), full_year(g["end2"])
        elif g["from"] is not None:
            start, end = int(g["from"]), int(g["to"])
        else:
            start = int(g["start"])
            end = full_year(g["end_dash"] or g["end_word"], start)
        if end <= start:  # "2025-15", "2027 to 2025": not a range; its years stay single facts
            return match.group(0)
        ranges.append((start, end))
        return " "

    rest = YEAR_RANGE.sub(take, text or "")
    return ranges, rest


def _range_term(start: int, end: int) -> Term:
    return Term("range", f"years_{start}_{end}")


def year_of(term: Term) -> int | None:
    """The year a term states: a program-year code (``bcy26`` → 2026) or a bare year (1900–2099)."""
    if term.kind == "code" and (match := _CODE_YEAR.match(term.text)):
        return full_year(match.group(1))
    if term.kind == "number" and is_year(term.text):
        return int(term.text)
    return None


def extract_key_facts(text: str) -> set[str]:
    """The normalised domain terms of ``text`` (``{"dollar_4106", "percent_85", "bcy26", "5"}``); a
    year range is one fact (``years_2025_2027``). One year written two ways ("BCY 2026 … 2026") keeps
    both names here; the scores count it once (:func:`distinct_facts`)."""
    return set(_facts(text))


def _facts(text: str) -> dict[str, Term]:
    ranges, rest = year_ranges(read_units(text or ""))
    facts = {term.text: term for term in (_range_term(*r) for r in ranges)}
    facts.update((term.text, term) for term in iter_terms(rest) if term.is_domain)
    return facts


def fact_identity(term: Term) -> str:
    """What a fact is, however written: ``year_2026`` for ``bcy26`` and ``2026``, else its name."""
    year = year_of(term)
    return f"year_{year}" if year is not None else term.text


def distinct_facts(facts: dict[str, Term]) -> dict[str, Term]:
    """``facts`` with one entry per :func:`fact_identity` (the first name, in sorted order)."""
    distinct: dict[str, Term] = {}
    for name in sorted(facts):
        distinct.setdefault(fact_identity(facts[name]), facts[name])
    return {term.text: term for term in distinct.values()}


@functools.lru_cache(maxsize=4096)
def stated_values(text: str) -> frozenset[str]:
    """What ``text`` states (its domain terms), with each money amount also as its bare number, each
    year also as ``year_NNNN`` and each year range as ``years_A_B`` and its two end years. Cached:
    a run asks it of the same context chunks for every sample and metric that cites them (pure
    Python under the GIL: at 16 samples in flight it held up the other samples' judge requests)."""
    values: set[str] = set()
    ranges, rest = year_ranges(read_units(text or ""))
    for start, end in ranges:
        values |= {_range_term(start, end).text, str(start), str(end), f"year_{start}", f"year_{end}"}
    for term in iter_terms(rest):
        if term.is_domain:
            values.add(term.text)
            if (amount := amount_of(term)) is not None:
                values.add(amount)
            if (year := year_of(term)) is not None:
                values.add(f"year_{year}")
            if (share := _share_of(term)) is not None:
                values.add(share)
    return frozenset(values)


def _is_stated(fact: Term, stated: frozenset[str] | set[str]) -> bool:
    # Money and plain numbers are interchangeable ("$4,106" is stated by a table row "4,106" and
    # "4,106" by "$4,106"); a year by any way of writing it; a range only by the same range;
    # a percentage and a fraction by each other ("85%" = "0.85"); a number by a legislature's ordinal
    # ("89" by "89th Legislature"); other codes only by themselves.
    if fact.text in stated:
        return True
    if (share := _share_of(fact)) is not None and share in stated:
        return True
    if (year := year_of(fact)) is not None and f"year_{year}" in stated:
        return True
    if fact.kind == "money":
        return amount_of(fact) in stated
    if fact.kind == "number":
        # "the 89th Texas" states 89 where the page reads "89th Texas Legislature" (the code leg89)
        return f"leg{fact.text}" in stated or \
            any(value.endswith(f"_{fact.text}") for value in stated if value.startswith(("dollar_", "euro_", "pound_")))
    return False


def _facts_not_asked(text: str, question: str | None) -> dict[str, Term]:
    asked = stated_values(question or "")
    return distinct_facts({name: term for name, term in _facts(text).items() if not _is_stated(term, asked)})


def answer_claims(answer: str) -> str:
    """What ``answer`` claims: its statements (quoted evidence removed,
    :func:`rag_lab.answer.statements.statement_text`) less citation markers and refusals."""
    return claimed_text(statement_text(answer))


def answer_facts(text: str, question: str | None = None) -> dict[str, Term]:
    """The key facts ``text`` claims that ``question`` does not state (its statements only: quotes,
    citation markers and refusing sentences ignored, :func:`answer_claims`)."""
    return _facts_not_asked(answer_claims(text), question)


def reference_facts(reference: str, question: str | None = None) -> dict[str, Term]:
    """The reference's key facts that ``question`` does not state: what an answer must add."""
    return _facts_not_asked(reference, question)


def has_key_facts(reference: str, question: str | None = None) -> bool:
    """Is key-fact recall defined: does the reference state a fact the question does not?"""
    return bool(reference_facts(reference, question))


def key_fact_recall(answer: str, reference: str, question: str | None = None) -> float | None:
    """Share of ``reference``'s key facts, less those ``question`` states, that ``answer`` states;
    None when the reference has none left. A refusal claims nothing, so it scores 0."""
    facts = reference_facts(reference, question)
    if not facts:
        return None
    stated = stated_values(answer_claims(answer))
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
    stated = stated_values(answer_claims(answer))
    return sorted(text for text, fact in reference_facts(reference, question).items() if not _is_stated(fact, stated))


def reference_facts_stated(text_values: frozenset[str], reference: str, question: str | None = None) -> tuple[list[str], int]:
    """``(stated, total)``: which of the reference's key facts (less the question's) a text states,
    given the text's :func:`stated_values` (computed once per long text), and how many there are."""
    facts = reference_facts(reference, question)
    return sorted(name for name, fact in facts.items() if _is_stated(fact, text_values)), len(facts)
