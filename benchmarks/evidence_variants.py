"""Selection variants measured by benchmarks/evidence_coverage.py: each picks the evidence texts of one
question from its candidate units, by retrieval-grade scores (BM25, MiniLM, their RRF) and code only.

- ``grown``: the top units of an order widened by their neighbouring lines (or sentence windows) of
  the same chunk — a fact often sits one line from the unit that names what it is about; also only
  towards lines stating a figure, or only on the side whose line ranks higher;
- ``named``: a table row whose *row label* the question names goes first, the other rows of its table
  last (:func:`rag_lab.answer.evidence_order.named_rows_first`); ``trimmed``: a row cut to its label
  and the column the question names (``project_row``), so that a character budget holds more units;
- ``rows/table``: at most N rows of one table, the rest after every other unit;
- ``budget``: units taken while their texts fit a number of characters instead of a number of units;
- ``passages``: each unit in fused order that no passage holds yet, with the line before it and up to
  four lines after it in its chunk (a row the question names alone), within a character budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rag_lab.answer.compress import project_row
from rag_lab.answer.evidence import Unit, pick_units
from rag_lab.answer.evidence_order import capped_rows, is_named_row, named_rows_first, states_figure
from rag_lab.ingest.tables import parse_row
from rag_lab.tokenizer import DomainTokenizer


@dataclass(frozen=True)
class Candidates:
    """One question's candidate units, their scores and the fused (RRF k 10) order."""

    question: str
    chunks: list[list[str]]
    units: list[Unit]
    sparse: np.ndarray
    dense: np.ndarray
    fused: list[int]
    tokenizer: DomainTokenizer


Selector = Callable[[Candidates, int], list[str]]

def rows_named_first(c: Candidates, order: list[int], demote_siblings: bool = True) -> list[int]:
    """``order`` with the rows the question names first and (``demote_siblings``, the shipped rule) the
    other rows of their tables last."""
    chunk_of = [u.doc for u in c.units]
    if demote_siblings:
        return named_rows_first(order, [u.text for u in c.units], chunk_of, c.question)
    named = [i for i in order if is_named_row(c.question, c.units[i].text)]
    return named + [i for i in order if i not in named]


def rows_per_table(c: Candidates, order: list[int], cap: int) -> list[int]:
    return capped_rows(order, [u.text for u in c.units], [u.doc for u in c.units], cap)


def texts_of(c: Candidates, picked: list[int]) -> list[str]:
    return [c.units[i].text for i in picked]


def trimmed_texts(c: Candidates, picked: list[int]) -> list[str]:
    terms = set(c.tokenizer(c.question))
    return [project_row(c.units[i].text, terms, c.tokenizer) for i in picked]


def _widen(c: Candidates, picked: list[int], keep_line: Callable[[int, int, int], bool]) -> list[str]:
    """The picked units' texts, each widened by the line before and the line after it in its chunk when
    ``keep_line(rank, doc, line)`` holds and no other picked unit holds that line."""
    taken = {(c.units[i].doc, j) for i in picked for j in range(c.units[i].first, c.units[i].last + 1)}
    texts = []
    for rank, i in enumerate(picked):
        unit = c.units[i]
        lines = c.chunks[unit.doc - 1]
        before = [unit.first - 1] if unit.first > 0 and (unit.doc, unit.first - 1) not in taken \
            and keep_line(rank, unit.doc, unit.first - 1) else []
        after = [unit.last + 1] if unit.last + 1 < len(lines) and (unit.doc, unit.last + 1) not in taken \
            and keep_line(rank, unit.doc, unit.last + 1) else []
        taken |= {(unit.doc, j) for j in before + after}
        texts.append(" ".join([lines[j] for j in before] + [unit.text] + [lines[j] for j in after]))
    return texts


def figure_lines_grown(c: Candidates, picked: list[int]) -> list[str]:
    """Every picked unit widened by a neighbouring line that states a figure."""
    return _widen(c, picked, lambda rank, doc, line: states_figure(c.chunks[doc - 1][line]))


def better_side_grown(c: Candidates, picked: list[int], top: int) -> list[str]:
    """The first ``top`` picked units widened by one line, on the side whose line's own unit ranks higher
    in the fused order."""
    line_rank: dict[tuple[int, int], int] = {}
    for r, i in enumerate(c.fused):
        u = c.units[i]
        for j in range(u.first, u.last + 1):
            line_rank[(u.doc, j)] = min(line_rank.get((u.doc, j), len(c.fused)), r)
    chosen: dict[int, int] = {}
    for rank, i in enumerate(picked[:top]):
        u = c.units[i]
        sides = [j for j in (u.first - 1, u.last + 1) if (u.doc, j) in line_rank]
        if sides:
            chosen[rank] = min(sides, key=lambda j: line_rank[(u.doc, j)])
    return _widen(c, picked, lambda rank, doc, line: chosen.get(rank) == line)


def grown_texts(c: Candidates, picked: list[int], top: int, back: int, ahead: int, by: str = "line",
                prose_only: bool = False) -> list[str]:
    """The picked units' texts, the first ``top`` widened by ``back`` lines before and ``ahead`` after in
    their chunk (``by="unit"``: to the start / end of the sentence window holding that line), never onto
    a line another picked unit holds (``prose_only``: nor onto a table row, and a table row not at all)."""
    taken = {(c.units[i].doc, j) for i in picked for j in range(c.units[i].first, c.units[i].last + 1)}
    texts = []
    for rank, i in enumerate(picked):
        unit = c.units[i]
        lines = c.chunks[unit.doc - 1]
        if rank >= top or prose_only and parse_row(unit.text) is not None:
            texts.append(unit.text)
            continue
        first, last = unit.first, unit.last
        for _ in range(back):
            target = first - 1
            if by == "unit" and target >= 0:
                target = min((u.first for u in c.units if u.doc == unit.doc and u.first <= target <= u.last),
                             default=target)
            span = range(target, first)
            if target < 0 or any((unit.doc, j) in taken or prose_only and parse_row(lines[j]) for j in span):
                break
            first = target
        for _ in range(ahead):
            target = last + 1
            if by == "unit" and target < len(lines):
                target = max((u.last for u in c.units if u.doc == unit.doc and u.first <= target <= u.last),
                             default=target)
            span = range(last + 1, target + 1)
            if target >= len(lines) or any((unit.doc, j) in taken or prose_only and parse_row(lines[j]) for j in span):
                break
            last = target
        taken |= {(unit.doc, j) for j in range(first, last + 1)}
        texts.append(" ".join(lines[first:unit.first] + [unit.text] + lines[unit.last + 1:last + 1]))
    return texts


def by_budget(c: Candidates, order: list[int], chars: int, render: Callable[[Candidates, list[int]], list[str]]) -> list[str]:
    """Units of ``order`` (no repeated line or text), rendered, while their texts hold at most ``chars``
    (the first one always)."""
    picked: list[int] = []
    for i in pick_units(c.units, order, len(c.units)):
        if picked and sum(len(t) for t in render(c, picked + [i])) > chars:
            break
        picked.append(i)
    return render(c, picked)


@dataclass(frozen=True)
class Passage:
    unit: int  # index of the unit it grew from
    first: int  # 0-based line indices within the unit's chunk
    last: int
    line_texts: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.line_texts)


def grow_passages(units: Sequence[Unit], order: Sequence[int], chunks: Sequence[Sequence[str]], question: str,
                  max_chars: int, back: int = 1, ahead: int = 4) -> list[Passage]:
    """Passages around the units of ``order`` (best first): each unit no passage holds yet, with up to
    ``back`` lines before it and ``ahead`` after it in its chunk (stopping at a line another passage
    holds), lines kept in reading order while the passages fit ``max_chars``. A unit whose text was taken
    already (the same sentence printed twice) is skipped; a row the question names gets no lines around it."""
    taken: set[tuple[int, int]] = set()
    texts: set[str] = set()
    passages: list[Passage] = []
    used = 0
    for index in order:
        unit = units[index]
        span = {(unit.doc, j) for j in range(unit.first, unit.last + 1)}
        if span & taken or unit.text in texts:
            continue
        lines = chunks[unit.doc - 1]
        first, last = unit.first, unit.last
        if not is_named_row(question, unit.text):
            while first > 0 and unit.first - first < back and (unit.doc, first - 1) not in taken:
                first -= 1
            while last + 1 < len(lines) and last - unit.last < ahead and (unit.doc, last + 1) not in taken:
                last += 1
        # a one-line unit as the unit reads (a bare row carries its header), a window as its lines
        own = [unit.text] if unit.first == unit.last else list(lines[unit.first:unit.last + 1])
        candidates = [(j, lines[j]) for j in range(first, unit.first)] + \
                     [(unit.first + n, text) for n, text in enumerate(own)] + \
                     [(j, lines[j]) for j in range(unit.last + 1, last + 1)]
        kept: list[tuple[int, str]] = []
        size = 0
        for j, text in candidates:
            if used + size + len(text) > max_chars and j < unit.first:
                continue  # the line before is the first to go
            if used + size + len(text) > max_chars and (passages or j > unit.last):
                break
            kept.append((j, text))
            size += len(text) + 1
        if not any(unit.first <= j <= unit.last for j, _ in kept):
            break
        taken |= {(unit.doc, j) for j, _ in kept}
        texts.add(unit.text)
        passages.append(Passage(index, kept[0][0], kept[-1][0], tuple(text for _, text in kept)))
        used += size
        if used >= max_chars:
            break
    return passages
