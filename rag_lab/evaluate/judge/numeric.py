"""Numbers checked by code (issue 35 lever 3): a statement's values must appear in its evidence.

The 1.5B judge reads "$115,052" against a premise that says "$92,041" and answers "yes" about half
the time; code does not. ``values_of`` turns money, percentages, dates, years, program years
(BCY 2026 = BCY-26 = BCY26), year ranges (FFY 2025–2027 = 2025-27 = 2025 through 2027: the two
ends) and counts (digits or the words two … twenty) into normalised tokens; ``missing_values`` says
which of a statement's tokens its evidence does not state. A statement with a missing value is
unsupported whatever the model says; one whose values all appear still goes to the model.

Kept in the judge package on purpose (key_facts.py has its own rules for a different question:
which facts of a reference an answer repeats); both spell numbers and years by the tokenizer's one
rule (``canonical_number``, ``full_year``).
"""

from __future__ import annotations

import re

from rag_lab.tokenizer import canonical_number as _plain
from rag_lab.tokenizer import full_year as _year

_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), start=1)}
_MONTHS |= {m[:3]: i for m, i in list(_MONTHS.items())} | {"sept": 9}
_WORDS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                      "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                      "seventeen", "eighteen", "nineteen", "twenty"))}
_SCALE = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_DASH = r"\s*(?:-|–|—|to|through|thru)\s*"
# a program year: BCY 2026, BCY-26, BCY26, FFY 2025, SFY'24, FY 2025–2027
_PROGRAM = re.compile(rf"\b(BCY|FFY|SFY|FY|PY)\s*[-']?\s*(\d{{4}}|\d{{2}})(?:{_DASH}(\d{{4}}|\d{{2}}))?\b", re.I)
_MONTH_DATE = re.compile(r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) +
                         r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b", re.I)
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})\b")
_YEAR_RANGE = re.compile(rf"\b((?:19|20)\d{{2}}){_DASH}((?:19|20)?\d{{2}})\b")
_MONEY = re.compile(rf"\$\s?({_NUM})(?:\s*(thousand|million|billion)\b)?", re.I)
_PERCENT = re.compile(rf"({_NUM})\s?(?:%|percent\b)", re.I)
_NUMBER = re.compile(rf"(?<![\w.,/$])({_NUM})(?![\d%]|,\d|\.\d)")
_WORD_NUMBER = re.compile(r"\b(" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\b", re.I)


def values_of(text: str) -> set[str]:
    """The normalised values ``text`` states: ``money:4106``, ``percent:4.26``, ``year:2026`` (years,
    program years and range ends), ``date:10-01`` (month-day), ``count:3`` (other numbers; 0 and 1
    are left out: list numbers and "one of" say nothing checkable)."""
    found: set[str] = set()
    taken: list[tuple[int, int]] = []

    def take(match: re.Match[str]) -> bool:
        if any(s < match.end() and match.start() < e for s, e in taken):
            return False
        taken.append(match.span())
        return True

    for m in _PROGRAM.finditer(text):
        if take(m):
            start = _year(m.group(2))
            found.add(f"year:{start}")
            if m.group(3):
                found.add(f"year:{_year(m.group(3), start)}")
    for m in _SLASH_DATE.finditer(text):
        if take(m):
            found |= {f"date:{int(m.group(1)):02d}-{int(m.group(2)):02d}", f"year:{_year(m.group(3))}"}
    for m in _MONTH_DATE.finditer(text):
        if take(m):
            found.add(f"date:{_MONTHS[m.group(1).lower()]:02d}-{int(m.group(2)):02d}")
            if m.group(3):
                found.add(f"year:{m.group(3)}")
    for m in _YEAR_RANGE.finditer(text):
        if take(m):
            found |= {f"year:{m.group(1)}", f"year:{_year(m.group(2), m.group(1))}"}
    for m in _MONEY.finditer(text):
        if take(m):
            value = float(m.group(1).replace(",", "")) * _SCALE.get((m.group(2) or "").lower(), 1)
            found.add(f"money:{_plain(f'{value:.2f}')}")
    for m in _PERCENT.finditer(text):
        if take(m):
            found.add(f"percent:{_plain(m.group(1))}")
    for m in _NUMBER.finditer(text):
        if take(m):
            value = _plain(m.group(1))
            if value.isdigit() and len(value) == 4 and 1900 <= int(value) <= 2100:
                found.add(f"year:{value}")
            elif value not in ("0", "1"):
                found.add(f"count:{value}")
    for m in _WORD_NUMBER.finditer(text):
        if _WORDS[m.group(1).lower()] > 1:
            found.add(f"count:{_WORDS[m.group(1).lower()]}")
    return found


def _loose(value: str) -> str:
    """A value without its kind: "$4,106" in the statement is "4,106" in a table row without "$"."""
    return value.split(":", 1)[1]


def missing_values(statement: str, evidence: str) -> list[str]:
    """The statement's values its evidence does not state, sorted. A value matches one of the same
    kind, or a bare count of the same number (a table cell "4,106" under a "Rate ($)" header)."""
    stated = values_of(evidence)
    bare = {_loose(v) for v in stated}
    return sorted(v for v in values_of(statement)
                  if v not in stated and not (_loose(v) in bare and (f"count:{_loose(v)}" in stated
                                                                     or v.startswith("count:"))))
