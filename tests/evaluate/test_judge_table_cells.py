"""A figure read from the wrong cell of a table row is not stated (judge/table_cells.py): exact
findings on rows as ingestion writes them, and the verdict through the scoring path (``Scorer.score``
with a model double answering P(yes) = 0.9 for everything: only the rule can give 0)."""

from __future__ import annotations

import pytest

from rag_lab.evaluate.judge.table_cells import misplaced_figures, periods_in, rows_of
from rag_lab.evaluate.run.scorer import Scorer
from tests.evaluate.judge_doubles import VerdictLLM

P = 0.9
ROWS = (
    "Income Eligibility Limits | Family Size 5 | Annual: $106,768 | Monthly: $8,897 | Weekly: $2,053 | "
    "Bi-Monthly: $4,449 | Bi-Weekly: $4,106\n"
    "Income Eligibility Limits | Family Size 10 | Annual: $132,540 | Monthly: $11,045 | Weekly: $2,549 | "
    "Bi-Monthly: $5,522 | Bi-Weekly: $5,098\n"
    "Income Eligibility Limits | Family Size 2 | Annual: $62,588 | Monthly: $5,216 | Weekly: $1,204 | "
    "Bi-Monthly: $2,608 | Bi-Weekly: $2,407\n"
    "Maximum Parent Share of Cost | Family Size 5 | Annual: $7,474 | Monthly: $623 | Weekly: $144 | "
    "Bi-Monthly: $311 | Bi-Weekly: $287\n"
    "2025 CCS PAYMENT SCHEDULE | Payment Service Dates 1/27/2025 - 2/09/2025 | Payment Date Issued: 1/30/2025\n"
    "2025 CCS PAYMENT SCHEDULE | Payment Service Dates 8/25/2025 - 9/07/2025 | Payment Date Issued: 8/27/2025\n"
    "Page 4 | FFY 2025–2027 CCDF State Plan\n")


def test_rows_are_the_lines_of_three_or_more_cells_with_their_headers():
    rows = rows_of(ROWS)
    assert len(rows) == 6  # the two-cell page footer is no table row
    first = rows[0]
    assert first.table == "income eligibility limits"
    assert [c.header for c in first.cells] == ["", "Annual", "Monthly", "Weekly", "Bi-Monthly", "Bi-Weekly"]
    assert first.cells[0].values == {"5"} and first.cells[-1].values == {"4106"}
    assert rows[4].cells[0].values == {"01-27", "2025", "02-09"} and rows[4].cells[1].header == "Payment Date Issued"
    assert first.labels == {"5"} and rows[4].labels == {"01-27", "2025", "02-09"}


@pytest.mark.parametrize(("text", "periods"), [
    ("Bi-Monthly", {"bimonthly"}), ("earning bi-weekly", {"biweekly"}), ("every two weeks", {"biweekly"}),
    ("twice a month", {"bimonthly"}), ("per month", {"monthly"}), ("$8,897 monthly or $4,106 biweekly",
                                                                   {"monthly", "biweekly"}),
    ("a year", {"annual"}), ("the family of 5", set()),
])
def test_pay_periods_are_read_in_any_common_wording_and_each_wording_once(text, periods):
    assert periods_in(text) == periods


@pytest.mark.parametrize(("statement", "misplaced"), [
    # another column of the right row: Bi-Monthly's figure for a bi-weekly question
    ("The maximum income for a family of 5 earning bi-weekly is $4,449.", ["4449"]),
    # another row: family size 10's cell said of a family of 5 (the label 5 names a row without it)
    ("The maximum income for a family of 5 earning bi-weekly is $5,522.", ["5522"]),
    ("A family of 10 may earn $106,768 a year.", ["106768"]),
    # the issue date of another service period
    ("The payment date for services provided from January 27, 2025 to February 9, 2025, is 8/27/2025.",
     ["08-27"]),
    # the right cells, in any wording, alone or in a list of rows
    ("The maximum income for a family of 5 earning bi-weekly is $4,106.", []),
    ("A family of 5 may earn $4,106 every two weeks.", []),
    ("A family of 5 may earn $8,897 monthly or $4,106 bi-weekly.", []),
    ("Family of 5: $4,106 bi-weekly; family of 2: $2,407 bi-weekly.", []),
    # a bare list of one column's figures from several rows names no row
    ("The bi-weekly limits are $2,407 and $4,106.", []),
    ("The limits are $62,588 a year and $8,897 a month.", []),
    ("The payment date for services from January 27, 2025 to February 9, 2025 is January 30, 2025.", []),
    # a terse figure names no column; a year every row repeats places nothing; two tables' rows
    ("$4,106 [Doc 1]", []),
    ("Services from 8/25/2025 were paid in 2025.", []),
    ("A family of 5 earning $4,106 every two weeks pays at most $287.", []),
])
def test_a_figure_is_misplaced_when_the_statement_puts_it_in_another_row_or_column(statement, misplaced):
    assert misplaced_figures(statement, ROWS) == misplaced


def test_a_context_without_table_rows_places_nothing():
    assert misplaced_figures("A family of 5 may earn $4,449 bi-weekly.",
                             "A family of 5 may earn $4,449 bi-monthly.") == []


@pytest.fixture(scope="module")
def scorers(tmp_path_factory):
    from rag_lab.config import load_settings

    settings = load_settings(data_dir=tmp_path_factory.mktemp("cells")).model_copy(update={"llm_provider": "local"})
    return {cells: Scorer(settings.model_copy(update={"judge_cells": cells}), judge_llm=VerdictLLM(p=P),
                          metrics=["faithfulness"]) for cells in ("code", "off")}


def faithfulness(scorer, answer):
    scores, errors = scorer.score({"id": "q", "question": "What may a family of 5 earn?", "answer": answer,
                                   "reference": "A family of 5 may earn up to $4,106 bi-weekly.",
                                   "contexts": [{"text": ROWS}]})
    assert errors == {}
    return scores["faithfulness"]


def test_the_wrong_cell_scores_0_and_the_right_cell_is_left_to_the_model(scorers):
    assert faithfulness(scorers["code"], "A family of 5 earning bi-weekly may earn up to $4,449.") == 0.0
    assert faithfulness(scorers["code"], "A family of 5 earning bi-weekly may earn up to $4,106.") == pytest.approx(P)
    # with the rule off the model decides both (the double says yes to anything)
    assert faithfulness(scorers["off"], "A family of 5 earning bi-weekly may earn up to $4,449.") == pytest.approx(P)


def test_a_copied_row_is_stated_whatever_cells_it_holds(scorers):
    row = ROWS.splitlines()[0]
    assert faithfulness(scorers["code"], f"“{row}” [Doc 1: limits.pdf, Page 2, line 4]") == 1.0
