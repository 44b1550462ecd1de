"""A measured alternative order in which evidence units could be taken, and the lines around the first ones.

:mod:`rag_lab.answer.evidence` scores every unit of the retrieved chunks by BM25 and by the
retriever's embedding model and takes them in that fused order. This module reorders them and widens
the best units, each step measured by the key-fact coverage of the evidence on the dev split
(benchmarks/evidence_coverage.py, benchmarks/evidence_variants.py, docs/answering.md). Together the
steps raise coverage@6 by +0.08, but the 1.5B's answers from that evidence stated no more key facts
(recall 0.327 → 0.341 on 16 dev questions) and half as precisely (0.33 → 0.17): the answer path does
not reorder or widen its evidence; the benchmarks do. Its quotes do use :func:`is_named_row` (a row the
question names is quoted without the rows around it).

1. **chunk prior** — a third reciprocal-rank ranking beside BM25 and dense, at half weight: the units
   by their chunk's retrieval rank (the fused order within a chunk). The first chunk holds most facts.
2. **figures first** — units stating a figure (an amount, count, date, percentage, year or code)
   before the others, each group in the order of step 1.
3. **the rows a question names** — a table row whose *row label* the question names ("a family of 5"
   names ``Family Size 5``; "January 27, 2025 to February 9, 2025" names
   ``Payment Service Dates 1/27/2025 - 2/09/2025``, as does any date within that range) goes first,
   the other rows of its table last: they answer another question.
4. **at most** :data:`ROWS_PER_TABLE` **rows of one table** before every other unit (a long table
   would fill the evidence with rows of equal score).
5. **widened** — the first :data:`WIDEN_TOP` units taken gain the line before and the line after them
   in their chunk (a fact often sits one line from what names it), never a line another unit holds;
   a row the question names is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from rag_lab.fusion.rrf import rrf_fuse
from rag_lab.ingest.tables import parse_row
from rag_lab.tokenizer import iter_terms

CHUNK_PRIOR_WEIGHT = 0.5
ROWS_PER_TABLE = 2
WIDEN_TOP = 3
WIDEN_LINES = 1
ORDER_RULE = (f"chunk prior w={CHUNK_PRIOR_WEIGHT}, figures first, named rows first (their tables' other rows last), "
              f"≤{ROWS_PER_TABLE} rows a table, top {WIDEN_TOP} widened ±{WIDEN_LINES} line, named rows not")

_MONTHS = {name: number for number, names in enumerate(
    [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
     ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
     ("dec", "december")], start=1) for name in names}
_NUMERIC_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_WORD_DATE = re.compile(r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?\s+(\d{1,2}),?\s+(\d{4})\b",
                        re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")


def states_figure(text: str) -> bool:
    """True when ``text`` states a figure: a domain term of the sparse tokenizer (money, percentage,
    number, code with digits)."""
    return any(term.is_domain for term in iter_terms(text))


def _date(year: str, month: int, day: str) -> date | None:
    try:
        return date(int(year), month, int(day))
    except ValueError:
        return None


def dates_and_numbers(text: str) -> tuple[list[date], set[str]]:
    """The dates of ``text`` (``1/27/2025`` or ``January 27, 2025``) and its other numbers (``"5"``,
    ``"1200"`` for ``1,200``; leading zeros dropped)."""
    dates = [d for m in _NUMERIC_DATE.finditer(text) if (d := _date(m[3], int(m[1]), m[2]))]
    dates += [d for m in _WORD_DATE.finditer(text) if (d := _date(m[3], _MONTHS[m[1].lower()], m[2]))]
    rest = _WORD_DATE.sub(" ", _NUMERIC_DATE.sub(" ", text))
    return dates, {m[0].replace(",", "").lstrip("0") or "0" for m in _NUMBER.finditer(rest)}


def row_label(text: str) -> tuple[str, str] | None:
    """``(caption, row label)`` of a table row as the parser writes it (the caption empty without
    one); None for any other text."""
    row = parse_row(text)
    if row is None:
        return None
    labels, _ = row
    return (labels[0] if len(labels) > 1 else "", labels[-1])


def names_row(question: str, label: str) -> bool:
    """The question names the row labelled ``label``: a date of the question is a date of the label or
    falls within the label's date range, or (a label without dates) every number of the label is a
    number of the question."""
    q_dates, q_numbers = dates_and_numbers(question)
    l_dates, l_numbers = dates_and_numbers(label)
    if l_dates:
        if any(d in l_dates for d in q_dates):
            return True
        return len(l_dates) == 2 and any(min(l_dates) <= d <= max(l_dates) for d in q_dates)
    return bool(l_numbers) and l_numbers <= q_numbers


def is_named_row(question: str, text: str) -> bool:
    """``text`` is a table row whose row label the question names (:func:`names_row`)."""
    label = row_label(text)
    return label is not None and names_row(question, label[1])


def with_chunk_prior(legs: dict[str, list[int]], fused: Sequence[int], chunk_of: Sequence[int],
                     k: float) -> list[int]:
    """The units fused again by RRF with a third leg, the units by their chunk's rank (``fused``'s
    order within a chunk), at weight :data:`CHUNK_PRIOR_WEIGHT`."""
    chunk_leg = sorted(fused, key=lambda i: chunk_of[i])
    fused_legs = dict(legs) | {"chunk": chunk_leg}
    return [int(i) for i, _ in rrf_fuse(fused_legs, k=k, weights={"chunk": CHUNK_PRIOR_WEIGHT})]


def figures_first(order: Sequence[int], texts: Sequence[str]) -> list[int]:
    stating = [i for i in order if states_figure(texts[i])]
    taken = set(stating)
    return stating + [i for i in order if i not in taken]


def named_rows_first(order: Sequence[int], texts: Sequence[str], chunk_of: Sequence[int], question: str) -> list[int]:
    """``order`` with the rows the question names first and the other rows of their tables (same chunk
    and caption) last; unchanged when it names none."""
    labels = {i: row_label(texts[i]) for i in order}
    named = [i for i in order if labels[i] and names_row(question, labels[i][1])]
    if not named:
        return list(order)
    tables = {(chunk_of[i], labels[i][0]) for i in named}
    named_set = set(named)
    siblings = [i for i in order if i not in named_set and labels[i] and (chunk_of[i], labels[i][0]) in tables]
    held = named_set | set(siblings)
    return named + [i for i in order if i not in held] + siblings


def capped_rows(order: Sequence[int], texts: Sequence[str], chunk_of: Sequence[int],
                cap: int = ROWS_PER_TABLE) -> list[int]:
    """``order`` with at most ``cap`` rows of one table (chunk and caption) before every other unit."""
    seen: dict[tuple[int, str], int] = {}
    head: list[int] = []
    tail: list[int] = []
    for i in order:
        label = row_label(texts[i])
        if label is None:
            head.append(i)
            continue
        table = (chunk_of[i], label[0])
        seen[table] = seen.get(table, 0) + 1
        (head if seen[table] <= cap else tail).append(i)
    return head + tail


def evidence_order(question: str, texts: Sequence[str], chunk_of: Sequence[int], legs: dict[str, list[int]],
                   fused: Sequence[int], k: float) -> list[int]:
    """Steps 1–4 of the module: the order the units (``texts``, from chunks ``chunk_of``) are taken in,
    from the scorers' rankings ``legs`` and their fusion ``fused`` (RRF constant ``k``)."""
    order = with_chunk_prior(legs, fused, chunk_of, k)
    order = figures_first(order, texts)
    order = named_rows_first(order, texts, chunk_of, question)
    return capped_rows(order, texts, chunk_of)


def widened(spans: Sequence[tuple[int, int, int]], texts: Sequence[str], chunks: Sequence[Sequence[str]],
            question: str, top: int = WIDEN_TOP, lines: int = WIDEN_LINES) -> list[tuple[int, int, str]]:
    """``(first, last, text)`` of each selected unit (``spans``: its chunk index, first and last line,
    0-based, best first), the first ``top`` widened by up to ``lines`` lines before and after in their
    chunk, one line at a time, stopping at a line another unit holds or has been widened onto, or that
    the unit's text holds already. A row the question names stays as it is: the rows around it answer
    other questions."""
    taken = {(doc, j) for doc, first, last in spans for j in range(first, last + 1)}
    out: list[tuple[int, int, str]] = []
    for rank, ((doc, first, last), text) in enumerate(zip(spans, texts)):
        if rank >= top or is_named_row(question, text):
            out.append((first, last, text))
            continue
        chunk = chunks[doc]
        start, end = first, last
        for _ in range(lines):  # a bare row's text holds its header line already: no gain in adding it
            if start == 0 or (doc, start - 1) in taken or chunk[start - 1] in text:
                break
            start -= 1
        for _ in range(lines):
            if end + 1 >= len(chunk) or (doc, end + 1) in taken or chunk[end + 1] in text:
                break
            end += 1
        taken |= {(doc, j) for j in range(start, end + 1)}
        out.append((start, end, " ".join([*chunk[start:first], text, *chunk[last + 1:end + 1]])))
    return out
