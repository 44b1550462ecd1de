"""benchmarks/evidence_variants.py's passages: a unit with the line before it and the lines after it in
its chunk, in reading order, never a line another passage holds, within a character budget; a table row
the question names stays alone."""

from __future__ import annotations

import pytest

from rag_lab.answer.evidence import Unit, line_units
from tests.builders import load_benchmark


@pytest.fixture(scope="module")
def variants():
    return load_benchmark("evidence_variants")


LINES = [f"line {n} says something." for n in range(10)]  # 24 characters each
UNITS = [Unit(1, j, j, text) for j, text in enumerate(LINES)]


def test_passages_take_their_lines_in_reading_order_and_stop_at_a_line_another_passage_holds(variants):
    passages = variants.grow_passages(UNITS, [5, 2, 9], [LINES], "question", max_chars=10_000, back=1, ahead=2)
    assert [(p.first, p.last) for p in passages] == [(4, 7), (1, 3), (8, 9)]  # 2 stops before 4; 9 starts after 7
    assert passages[0].text == " ".join(LINES[4:8])


def test_the_budget_keeps_whole_lines_and_drops_the_line_before_first(variants):
    [only] = variants.grow_passages(UNITS, [5, 2], [LINES], "question", max_chars=3 * 25, back=1, ahead=2)
    assert (only.first, only.last) == (4, 6)  # three lines fit, the next passage does not
    [tight] = variants.grow_passages(UNITS, [5, 2], [LINES], "question", max_chars=2 * 25, back=1, ahead=2)
    assert (tight.first, tight.last) == (4, 5)
    [no_room] = variants.grow_passages(UNITS, [5], [LINES], "question", max_chars=10, back=1, ahead=2)
    assert (no_room.first, no_room.last) == (5, 5)  # the first passage keeps its unit whatever its length


def test_a_row_the_question_names_gets_no_lines_around_it(variants):
    rows = [f"Income Eligibility Limits | Family Size {n} | Bi-Weekly: ${3000 + n}" for n in range(3, 8)]
    units = line_units(rows, doc=1)
    named = variants.grow_passages(units, [2, 0], [rows], "What is the limit for a family of 5?", max_chars=10_000)
    assert [(p.first, p.last) for p in named] == [(2, 2), (0, 1)]
    other = variants.grow_passages(units, [2], [rows], "What are the income limits?", max_chars=10_000)
    assert [(p.first, p.last) for p in other] == [(1, 4)]
