"""Numbers checked by code: a statement's values must appear in its evidence.

The 1.5B judge reads "$115,052" against a premise that says "$92,041" and answers "yes" about half
the time; code does not. ``values_of`` turns money, percentages, dates, years, program years
(BCY 2026 = BCY-26 = BCY26), year ranges (FFY 2025–2027 = 2025-27 = 2025 through 2027: the two
ends), intervals and counts into normalised tokens; ``missing_values`` says which of a statement's
tokens its evidence does not state. A statement with a missing value is unsupported whatever the
model says; one whose values all appear still goes to the model.

One value has one token however it is written, so a true restatement is never a missing value:

- numbers in digits or words ("five" = 5, "twenty-four" = 24, "two hundred" = 200), with scale
  words ("$1.2 million" = "$1,200,000" = "1.2 million dollars", "$12K" = "$12,000");
- dates in any common form: "October 1, 2025" = "Oct. 1st, 2025" = "1 October 2025" = "10/1/2025"
  = the ISO form YYYY-MM-DD (one date, not a year and a second number read as a year);
- intervals: "every two weeks" = "every other week" = "bi-weekly" = "fortnightly" (``every:2-week``;
  the "two" is no count the evidence must state); "quarterly" = "every 3 months";
- a percentage and the fraction the evidence states ("50%" against "one half", "33%" against
  "one third": within half a point).

The tokens are the judge's (key_facts.py answers a different question: which facts of a reference
an answer repeats); the figures under them (number words, scale words and letters, percentages,
fractions, years) are read by :mod:`rag_lab.evaluate.facts.figures`, which key facts read too.
"""

from __future__ import annotations

import re

from rag_lab.evaluate.facts.figures import (NUMBER_LITERAL, NUMBER_WORDS, PERCENT_SIGN, SCALE_WORD, YEAR,
                                            fractions_of, is_year, scaled_amount, words_value)
from rag_lab.evaluate.facts.key_facts import strip_citations
from rag_lab.tokenizer import canonical_number as _plain
from rag_lab.tokenizer import full_year as _year

_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), start=1)}
_MONTHS |= {m[:3]: i for m, i in list(_MONTHS.items())} | {"sept": 9}
# "May" only capitalised: "a family of 4 may earn" states no date
_MONTH = "(?i:" + "|".join(sorted(set(_MONTHS) - {"may"}, key=lambda m: (-len(m), m))) + ")|May"
_WORDS = NUMBER_WORDS
_NUM = NUMBER_LITERAL
_DASH = r"\s*(?:-|–|—|to|through|thru)\s*"
_SCALE_WORDS = rf"\s*({SCALE_WORD})\b"
# a program year: BCY 2026, BCY-26, BCY26, FFY 2025, SFY'24, FY 2025–2027
_PROGRAM = re.compile(rf"\b(BCY|FFY|SFY|FY|PY)\s*[-']?\s*(\d{{4}}|\d{{2}})(?:{_DASH}(\d{{4}}|\d{{2}}))?\b", re.I)
_ISO_DATE = re.compile(rf"\b({YEAR})[-/.](\d{{1,2}})[-/.](\d{{1,2}})\b")
_MONTH_DATE = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?i:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b")
_DAY_MONTH_DATE = re.compile(rf"\b(\d{{1,2}})(?i:st|nd|rd|th)?\s+(?i:of\s+)?({_MONTH})\.?(?:,?\s+(\d{{4}}))?\b")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})\b|\b(\d{1,2})-(\d{1,2})-(\d{4})\b")
_YEAR_RANGE = re.compile(rf"\b({YEAR}){_DASH}((?:19|20)?\d{{2}})\b")
_INTERVAL_UNIT = r"(day|week|month|year)s?\b"
_EVERY = re.compile(rf"\b(?:every|each|once\s+every)\s+(other|{_WORDS}|\d+)\s+{_INTERVAL_UNIT}", re.I)
_NAMED_INTERVAL = {"biweekly": "2-week", "bi-weekly": "2-week", "bi weekly": "2-week", "fortnightly": "2-week",
                   "fortnight": "2-week", "quarterly": "3-month", "semiannually": "6-month",
                   "semi-annually": "6-month", "biennially": "2-year", "biennial": "2-year"}
_NAMED = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _NAMED_INTERVAL), key=len, reverse=True)) + r")\b", re.I)
_MONEY = re.compile(rf"\$\s?({_NUM})(?:{_SCALE_WORDS}|\s?(bn|mm|[kmb])\b)?", re.I)
_MONEY_WORDS = re.compile(rf"\b({_NUM}|{_WORDS})(?:{_SCALE_WORDS})?\s+(?:dollars|USD)\b", re.I)
_PERCENT = re.compile(rf"({_NUM}){PERCENT_SIGN}", re.I)
_NUMBER = re.compile(rf"(?<![\w.,/$])({_NUM})(?![\d%]|,\d|\.\d)(?:{_SCALE_WORDS})?", re.I)
_WORD_NUMBER = re.compile(rf"\b({_WORDS})\b", re.I)
# A bare "2100" is a year to this rule too (key facts stop at 2099); its recorded version pins that.
_LAST_YEAR = 2100
# A fraction's percentage rounded to whole points still states it ("33%" for one third).
FRACTION_TOLERANCE = 0.5


def _number(value: float) -> str:
    return _plain(f"{value:.2f}")


def values_of(text: str, named_intervals: bool = True) -> set[str]:
    """The normalised values ``text`` states: ``money:4106``, ``percent:4.26``, ``year:2026`` (years,
    program years and range ends), ``date:10-01`` (month-day), ``every:2-week`` (an interval of more
    than one unit; ``named_intervals``: also those without a number, "bi-weekly", "quarterly"),
    ``count:3`` (other numbers, in digits or words; 0 and 1 are left out: list numbers and "one of"
    say nothing checkable)."""
    found: set[str] = set()
    taken: list[tuple[int, int]] = []

    def take(match: re.Match[str]) -> bool:
        if any(s < match.end() and match.start() < e for s, e in taken):
            return False
        taken.append(match.span())
        return True

    def date(month: str | int, day: str, year: str | None) -> None:
        month = int(month) if str(month).isdigit() else _MONTHS[str(month).lower().rstrip(".")]
        if 1 <= month <= 12 and 1 <= int(day) <= 31:
            found.add(f"date:{month:02d}-{int(day):02d}")
        if year:
            found.add(f"year:{_year(year)}")

    for m in _PROGRAM.finditer(text):
        if take(m):
            start = _year(m.group(2))
            found.add(f"year:{start}")
            if m.group(3):
                found.add(f"year:{_year(m.group(3), start)}")
    for m in _ISO_DATE.finditer(text):
        if 1 <= int(m.group(2)) <= 12 and take(m):
            date(m.group(2), m.group(3), m.group(1))
    for m in _SLASH_DATE.finditer(text):
        if take(m):
            month, day, year = (m.group(1), m.group(2), m.group(3)) if m.group(1) else m.group(4, 5, 6)
            date(month, day, year)
    for pattern in (_MONTH_DATE, _DAY_MONTH_DATE):
        for m in pattern.finditer(text):
            if take(m):
                month, day = (m.group(1), m.group(2)) if pattern is _MONTH_DATE else (m.group(2), m.group(1))
                date(month, day, m.group(3))
    for m in _YEAR_RANGE.finditer(text):
        if take(m):
            found |= {f"year:{m.group(1)}", f"year:{_year(m.group(2), m.group(1))}"}
    for m in _EVERY.finditer(text):
        if take(m):
            n = 2 if m.group(1).lower() == "other" else int(scaled_amount(m.group(1)))
            if n > 1:
                found.add(f"every:{n}-{m.group(2).lower()}")
    for m in _NAMED.finditer(text) if named_intervals else ():
        if take(m):
            found.add(f"every:{_NAMED_INTERVAL[m.group(1).lower()]}")
    for m in _MONEY.finditer(text):
        if take(m):
            found.add(f"money:{_number(scaled_amount(m.group(1), m.group(2) or m.group(3)))}")
    for m in _MONEY_WORDS.finditer(text):
        if take(m):
            found.add(f"money:{_number(scaled_amount(m.group(1), m.group(2)))}")
    for m in _PERCENT.finditer(text):
        if take(m):
            found.add(f"percent:{_plain(m.group(1))}")
    for m in _NUMBER.finditer(text):
        if take(m):
            value = _number(scaled_amount(m.group(1), m.group(2)))
            if is_year(value, last=_LAST_YEAR) and not m.group(2):
                found.add(f"year:{value}")
            elif value not in ("0", "1"):
                found.add(f"count:{value}")
    for m in _WORD_NUMBER.finditer(text):
        if take(m) and (value := words_value(m.group(1))) > 1:
            found.add(f"count:{value}")
    return found


def _loose(value: str) -> str:
    """A value without its kind: "$4,106" in the statement is "4,106" in a table row without "$";
    an interval "every:2-week" is its number, "2"."""
    plain = value.split(":", 1)[1]
    return plain.split("-", 1)[0] if value.startswith("every:") else plain


def missing_values(statement: str, evidence: str) -> list[str]:
    """The statement's values its evidence does not state, sorted. A value matches one of the same
    kind, or a bare count of the same number (a table cell "4,106" under a "Rate ($)" header; the
    "2" of "every 2 weeks"); a percentage matches a fraction the evidence states (within
    ``FRACTION_TOLERANCE`` points). Citation markers ("[Doc 2]") are no values of the statement, and
    an interval it names without a number ("quarterly") is not asked of the evidence (which may say
    "each quarter"): only the evidence's named intervals are read."""
    stated = values_of(evidence)
    bare = {_loose(v) for v in stated}
    fractions = fractions_of(evidence)

    def is_stated(value: str) -> bool:
        if value in stated:
            return True
        loose = _loose(value)
        if loose in bare and (f"count:{loose}" in stated or value.startswith(("count:", "every:"))):
            return True
        return value.startswith("percent:") and any(abs(float(loose) - f) <= FRACTION_TOLERANCE for f in fractions)

    return sorted(v for v in values_of(strip_citations(statement), named_intervals=False) if not is_stated(v))
