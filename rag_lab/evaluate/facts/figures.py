"""Figures as a text writes them: one reading of numbers, scale words, number words, percentages,
shares and years, used by key facts (:mod:`rag_lab.evaluate.facts.key_facts`) and the judge's
numbers rule (:mod:`rag_lab.evaluate.judge.numeric`).

The spelling of a number and a year is the tokenizer's (``canonical_number``, ``full_year``); what
is read here is what the tokenizer does not read: "thousand"/"million"/"billion" and "$12K" scale
an amount, "twenty-four" is 24, "percent" and "per cent" mark a percentage, "0.85" is the share
"85%" states, "one half" and "1/2" are the percentage 50.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from rag_lab.tokenizer import canonical_number

# A number in digits: 4,106  4106  8.50 (a thousands separator only between groups of three).
NUMBER_LITERAL = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# What makes a number a percentage when it follows it.
PERCENT_SIGN = r"\s?(?:%|percent\b|per\s+cent\b)"
# A four-digit year as the patterns read one (1900–2099).
YEAR = r"(?:19|20)\d{2}"
FIRST_YEAR, LAST_YEAR = 1900, 2099

SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
SCALE_WORD = "|".join(SCALES)
# "$12K", "$1.2M", "$3B" / "$3bn": the scale letters money is written with
SCALE_LETTERS = {"k": 1_000, "m": 1_000_000, "mm": 1_000_000, "b": 1_000_000_000, "bn": 1_000_000_000}

UNITS = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                     "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                     "seventeen", "eighteen", "nineteen"))}
TENS = {w: 10 * i for i, w in enumerate(("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                         "ninety"), start=2)}
_NUMBER_WORD = "|".join(sorted([*UNITS, *TENS, "hundred", *SCALES], key=len, reverse=True))
# A number in words: "twenty-four", "two hundred and five", "five thousand".
NUMBER_WORDS = rf"(?:{_NUMBER_WORD})(?:(?:\s+and\s+|[\s-]+)(?:{_NUMBER_WORD}))*"

# Fractions in words and digits ("one half", "two thirds", "1/2"): the percentage each states.
FRACTION_WORDS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4,
                  "fourths": 4, "fifth": 5, "fifths": 5, "tenth": 10, "tenths": 10}
FRACTION = re.compile(r"\b(?:(one|a|two|three|four|nine)[\s-]+)?(" + "|".join(FRACTION_WORDS) + r")\b"
                      r"|(?<![\d/])([1-9])/([2-9]|10)(?![\d/])", re.I)


def is_year(digits: str, last: int = LAST_YEAR) -> bool:
    """Is ``digits`` (a canonical number) a bare four-digit year, ``FIRST_YEAR`` to ``last``?"""
    return digits.isdigit() and len(digits) == 4 and FIRST_YEAR <= int(digits) <= last


def words_value(text: str) -> int:
    """"twenty-four" → 24, "two hundred and five" → 205, "five thousand" → 5000."""
    total, current = 0, 0
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in UNITS:
            current += UNITS[word]
        elif word in TENS:
            current += TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in SCALES:
            total, current = total + max(current, 1) * SCALES[word], 0
    return total + current


def scaled_amount(digits_or_words: str, scale: str | None = None) -> float:
    """The value of a number in digits or words times its scale word or letter ("1.2", "million" → 1.2e6)."""
    text = digits_or_words.replace(",", "")
    value = float(text) if re.fullmatch(r"[\d.]+", text) else float(words_value(text))
    scale = (scale or "").lower()
    return value * SCALES.get(scale, SCALE_LETTERS.get(scale, 1))


def scaled_number(digits: str, scale: str) -> str | None:
    """``digits`` times a scale word, spelled exactly (``"1.2", "million"`` → ``"1200000"``); None
    for digits that are no number."""
    try:
        value = Decimal(digits.replace(",", "")) * SCALES[scale.lower()]
    except InvalidOperation:
        return None
    return canonical_number(format(value, "f"))


def share(number: str) -> str | None:
    """The share a fraction states, ``share_0.85`` for "0.85"; None outside (0, 1)."""
    try:
        value = Decimal(number)
    except InvalidOperation:
        return None
    return f"share_{canonical_number(format(value, 'f'))}" if 0 < value < 1 else None


def percent_share(percent: str) -> str | None:
    """The share a percentage states, ``share_0.85`` for "85"."""
    return share(format(Decimal(percent) / 100, "f"))


def fractions_of(text: str) -> list[float]:
    """The fractions ``text`` states, as percentages ("one half" and "1/2": 50.0; "two thirds": 66.67)."""
    found = []
    for m in FRACTION.finditer(text):
        if m.group(2):
            numerator = {"one": 1, "a": 1, None: 1}.get((m.group(1) or "").lower() or None)
            numerator = numerator if numerator is not None else UNITS[m.group(1).lower()]
            found.append(100 * numerator / FRACTION_WORDS[m.group(2).lower()])
        else:
            found.append(100 * int(m.group(3)) / int(m.group(4)))
    return [round(f, 2) for f in found if f <= 100]
