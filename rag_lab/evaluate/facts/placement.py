"""Figures checked where they belong: is each figure an answer states in its context, and on a line
about the same thing?

An answer's figures are those of its statements (:mod:`rag_lab.answer.statements`; quotes support,
they do not claim), numbers in words read as digits ("four thousand one hundred six dollars" is
$4,106), less the figures the question states. Two checks:

- **uncontained** — no line of the context states the figure. Kinds are kept apart: a money figure
  is stated only by money (``$4,106``, ``4,106 dollars``, or a number in a table cell whose column is
  in dollars — ``Threshold $: 8481.00``), never by a bare number ("$5" is not the question's "family
  of 5"); a count written with its noun ("12 meetings") needs a line stating both; the line numbers a
  PDF prints down its margin ("16", "17 Child care …") are no figures.
- **misplaced** — the context states the figure, but not on a line about what the answer states it
  for (an amount, a percentage, a year, a count with its noun; a bare number says too little of what it
  is for to be placed). The lines looked at are those the answer cites (its ``[Doc N: …, lines L-M]``, or all of chunk
  N for a bare ``[Doc N]``), or every line of the context for an answer citing none. A line is about
  the same thing when it names no other row, pay period, year or table than the question and the
  statement name: in a table row the question names a column of ("bi-weekly"), the figure must be
  that column's cell; a row whose label has numbers must be the row the question or statement names
  ("Family Size 5", not 10); a line naming years or a family size must name the asked one; of the
  context's tables (their captions, "Income Eligibility Limits", "Maximum Parent Share of Cost") the
  one the question and statement name best is the one the figure must come from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bm25s.stopwords import STOPWORDS_EN

from rag_lab.answer.evidence_order import names_row
from rag_lab.answer.statements import statement_text
from rag_lab.evaluate.facts.figures import NUMBER_WORDS, UNITS, words_value
from rag_lab.evaluate.facts.key_facts import claimed_text, strip_citations, year_of
from rag_lab.ingest.tables import parse_row
from rag_lab.tokenizer import iter_terms

# Pay periods, the columns the corpus's tables repeat (hyphens and spaces dropped before matching).
# "per day" names a period; "12 months" (an age, a span) does not.
PERIODS = {"annual": "annual", "annually": "annual", "yearly": "annual", "per year": "annual", "monthly": "monthly",
           "per month": "monthly", "weekly": "weekly", "per week": "weekly", "biweekly": "biweekly",
           "bimonthly": "bimonthly", "semimonthly": "bimonthly", "daily": "daily", "per day": "daily",
           "hourly": "hourly", "per hour": "hourly", "every two weeks": "biweekly", "every other week": "biweekly",
           "twice a month": "bimonthly", "twice monthly": "bimonthly"}
_PERIOD = re.compile(r"\b(" + "|".join(sorted(PERIODS, key=len, reverse=True)) + r")\b")
# "2. You have the right …": a list's item number; "6:00 p.m.": a time, read as one figure
_LIST_ITEM = re.compile(r"(?<![\d$€£.,])\b\d{1,2}\.\s+(?=[A-Z])")
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_FAMILY_SIZE = re.compile(r"\bfamil(?:y|ies)\s+(?:size\s+)?(?:of\s+)?(\d{1,2})\b|\b(\d{1,2})[-\s]person\b", re.I)
_CITED_LINES = re.compile(r"\[\s*docs?\s+(\d+)\b([^\]]*)\]", re.I)
_LINE_SPAN = re.compile(r"\blines?\s+(\d+)(?:\s*-\s*(\d+))?")
_WORDED = re.compile(rf"\b{NUMBER_WORDS}\b(?:\s+(dollars?|percent|per\s+cent))?", re.I)
_LEADING_NUMBER = re.compile(r"^(\d{1,3})(?:\s+|$)(?=[A-Za-z(]|$)")
_NOT_NOUNS = {"and", "or", "to", "of", "the", "a", "an", "in", "for", "per", "is", "are", "was", "at", "on", "by",
              "from", "with", "as", "than", "percent", "dollars", "dollar", "through", "thru", "until", "each", "every",
              "been", "being", "which", "what", "who", "whom", "whose", "where", "when", "why", "how", "that", "this",
              "these", "those", "have", "has", "had", "were", "will", "would", "can", "could", "may", "might", "must",
              "shall", "should", "not", "also", "more", "less", "other", "such", "and", "but"}
_WORD = re.compile(r"[a-z]{3,}")


@dataclass(frozen=True)
class FigureCheck:
    """The figures an answer's statements state (``stated``), and which are ``uncontained`` or
    ``misplaced`` (normalised names, e.g. ``money_4449``, ``12 meeting``)."""

    stated: list[str]
    uncontained: list[str]
    misplaced: list[str]


@dataclass(frozen=True)
class Figure:
    kind: str  # money | percent | number | year | code
    value: str
    noun: str = ""  # a count's noun, singular ("meeting")

    @property
    def name(self) -> str:
        return f"{self.value} {self.noun}".strip() if self.kind == "number" else f"{self.kind}_{self.value}"


def digits_for_words(text: str) -> str:
    """``text`` with numbers in words as digits: "four thousand one hundred six dollars" → "4106 dollars",
    "twelve meetings" → "12 meetings"; a lone small number word ("one of the") stays unless money or a
    percentage follows it."""
    def spell(match: re.Match) -> str:
        words = match.group(0)[: match.start(1) - match.start(0)] if match.group(1) else match.group(0)
        lone = len(words.split()) == 1 and "-" not in words and words.strip().lower() in UNITS and words.strip().lower() not in {
            "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
        if lone and not match.group(1):
            return match.group(0)
        return f"{words_value(words)}{' ' + match.group(1) if match.group(1) else ''}"

    return _WORDED.sub(spell, text)


def _is_noun(word: str) -> bool:
    """A word a count may be of ("meetings"): lower case (not a name, "TWC", "KinderConnect"), no stop
    word ("been", "which"), no ordinal suffix ("5th" reads as 5 and "th")."""
    return len(word) >= 3 and word.isalpha() and word.islower() and word not in _NOT_NOUNS \
        and word not in STOPWORDS_EN


def _singular(word: str) -> str:
    word = word.lower()
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def figures_of(text: str, money_cell: bool = False) -> list[Figure]:
    """The figures ``text`` states, each with its kind (a bare number in a dollar column is money with
    ``money_cell``) and a count's noun."""
    text = _TIME.sub(r"T\1h\2", _LIST_ITEM.sub(" ", digits_for_words(text)))
    terms = list(iter_terms(text))
    found: list[Figure] = []
    for i, term in enumerate(terms):
        if not term.is_domain:
            continue
        year = year_of(term)
        if term.kind == "money":
            found.append(Figure("money", term.text.split("_", 1)[1]))
        elif term.kind == "percent":
            found.append(Figure("percent", term.text.split("_", 1)[1]))
        elif year is not None:
            found.append(Figure("year", str(year)))
        elif term.kind == "number":
            if money_cell:
                found.append(Figure("money", term.text))
                continue
            following = terms[i + 1] if i + 1 < len(terms) else None
            noun = following.text if following is not None and following.kind == "word" else ""
            found.append(Figure("number", term.text, _singular(noun) if _is_noun(noun) else ""))
        else:
            found.append(Figure(term.kind, term.text))
    return found


def _states(line_figures: Sequence[Figure], line_words: set[str], figure: Figure) -> bool:
    for other in line_figures:
        if other.kind == figure.kind and other.value == figure.value:
            return figure.kind != "number" or not figure.noun or figure.noun in line_words
        if figure.kind == "number" and other.kind == "money" and other.value == figure.value and not figure.noun:
            return True  # a bare figure an amount states ("4,106" of "$4,106")
    return False


@dataclass(frozen=True)
class Line:
    doc: int
    number: int  # 1-based among the chunk's non-empty lines
    text: str
    caption: str = ""  # a table row's
    label: str = ""  # a table row's row label
    cells: tuple[tuple[str, str], ...] = ()

    @property
    def words(self) -> set[str]:
        return {_singular(w) for w in _WORD.findall(self.text.lower())}

    def figures(self) -> list[tuple[Figure, str]]:
        """``(figure, cell label)`` for each figure (the label "" outside a table row's cells)."""
        if not self.cells:
            return [(f, "") for f in figures_of(self.text)]
        out = [(f, "") for f in figures_of(f"{self.caption} {self.label}")]
        for name, value in self.cells:
            out += [(f, name) for f in figures_of(value, money_cell="$" in name)]
        return out


def context_lines(chunks: Sequence[str]) -> list[Line]:
    """Every non-empty line of each chunk (``[Doc N]`` = ``chunks[N-1]``), a margin's line numbers dropped."""
    lines = []
    for doc, chunk in enumerate(chunks, start=1):
        raw = [line.strip() for line in (chunk or "").splitlines() if line.strip()]
        leading = [_LEADING_NUMBER.match(line) for line in raw]
        numbered = [int(m.group(1)) for m in leading if m]
        margin = len(numbered) >= 3 and sum(b == a + 1 for a, b in zip(numbered, numbered[1:])) >= len(numbered) // 2
        for number, (line, lead) in enumerate(zip(raw, leading), start=1):
            text = line[lead.end():] if margin and lead else line
            row = parse_row(text)
            if row is None:
                lines.append(Line(doc, number, text))
            else:
                labels, cells = row
                lines.append(Line(doc, number, text, labels[0] if len(labels) > 1 else "", labels[-1], tuple(cells)))
    return lines


def _cited(answer: str, lines: Sequence[Line]) -> list[Line]:
    """The lines ``answer`` cites (every line for an answer citing none of the chunks)."""
    chosen: list[Line] = []
    for doc, rest in _CITED_LINES.findall(answer or ""):
        span = _LINE_SPAN.search(rest)
        first, last = (int(span.group(1)), int(span.group(2) or span.group(1))) if span else (1, 10 ** 6)
        chosen += [ln for ln in lines if ln.doc == int(doc) and first <= ln.number <= last and ln not in chosen]
    return chosen or list(lines)


def _periods(text: str) -> set[str]:
    text = re.sub(r"[-\s]+(?=weekly|monthly)", "", text.lower())
    text = re.sub(r"\s+", " ", re.sub(r"\s*/\s*(?=(?:day|week|month|year|hour)\b)", " per ", text))
    return {PERIODS[m.group(1)] for m in _PERIOD.finditer(text)}


def _stem_words(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text.lower()) if w not in _NOT_NOUNS}


def _best_caption(named: str, lines: Sequence[Line]) -> str | None:
    """The one table caption of the context the question and statement name best (None: no caption, or a
    tie); a row under another caption is then out of place when the named table has a row of its label."""
    captions = {ln.caption for ln in lines if ln.caption}
    if len(captions) < 2:
        return None
    words = _stem_words(named)
    scored = sorted(((len(_stem_words(c) & words) / len(_stem_words(c) or {""}), c) for c in captions), reverse=True)
    return scored[0][1] if scored[0][0] > scored[1][0] else None


def _in_place(figure: Figure, line: Line, named: str, anchors: dict[str, set], caption: str | None) -> bool:
    """Does ``line`` state ``figure`` about what ``named`` (question + statement) names?"""
    cells = [label for f, label in line.figures() if _states([f], line.words, figure)]
    if not cells:
        return False
    asked_periods = anchors["periods"]
    if line.cells:
        if caption is not None and line.caption and line.caption != caption and \
                (caption, line.label) in anchors["rows"]:
            return False
        if anchors["named_rows"] and re.search(r"\d", line.label) and not names_row(named, line.label):
            return False
        row_periods = {p for name, _ in line.cells for p in _periods(name)}
        if asked_periods & row_periods:
            return any(_periods(label) & asked_periods for label in cells)
        if asked_periods and row_periods:  # a row of other periods only ($/Month beside a bi-weekly question)
            return False
        return True
    line_years = {f.value for f in figures_of(line.text) if f.kind == "year"}
    if anchors["years"] and line_years and not (line_years & anchors["years"]):
        return False
    sizes = {a or b for a, b in _FAMILY_SIZE.findall(line.text)}
    if anchors["sizes"] and sizes and not (sizes & anchors["sizes"]):
        return False
    line_periods = _periods(line.text)
    return not (asked_periods and line_periods and not (line_periods & asked_periods))


def check_figures(answer: str, contexts: Sequence[str], question: str = "") -> FigureCheck:
    """The figures of ``answer``'s statements (the question's left out), and which of them no context
    line states (uncontained) or only lines about something else state (misplaced)."""
    statements = statement_text(answer)
    claimed = claimed_text(digits_for_words(statements))
    asked = figures_of(question)
    figures = [f for f in dict.fromkeys(figures_of(claimed))
               if not any(a.kind == f.kind and a.value == f.value for a in asked)]
    lines = context_lines(contexts)
    said = strip_citations(statements)
    named = f"{question} {said}"
    anchors: dict[str, set] = {"periods": _periods(named),
               "years": {f.value for f in asked + figures_of(said) if f.kind == "year"},
               "sizes": {a or b for a, b in _FAMILY_SIZE.findall(named)}}
    caption = _best_caption(named, lines)
    anchors["rows"] = {(ln.caption, ln.label) for ln in lines if ln.cells}
    anchors["named_rows"] = {ln.label for ln in lines if ln.cells and names_row(named, ln.label)}
    cited = _cited(statements, lines)
    uncontained, misplaced = [], []
    for figure in figures:
        if not any(_states([f for f, _ in ln.figures()], ln.words, figure) for ln in lines):
            uncontained.append(figure.name)
        elif (figure.kind != "number" or figure.noun) and \
                not any(_in_place(figure, ln, named, anchors, caption) for ln in cited):  # a bare count is for nothing said
            misplaced.append(figure.name)
    return FigureCheck([f.name for f in figures], uncontained, misplaced)

