"""Table rows as self-describing lines: rendering and parsing back (exact strings)."""

from __future__ import annotations

from rag_lab.ingest.tables import clean_cell, is_header_table, parse_row, render_rows

TABLE = [["Family\nSize", "Annual", "Bi-Weekly"], ["1", "$ 47,862", "$ 1,841"], ["5", "$106,768", None],
         [None, None, None]]


def test_rows_carry_caption_label_and_column_names():
    assert render_rows(TABLE, "Income Eligibility Limits") == [
        "Income Eligibility Limits | Family Size 1 | Annual: $47,862 | Bi-Weekly: $1,841",
        "Income Eligibility Limits | Family Size 5 | Annual: $106,768",  # the empty cell is skipped
    ]  # and the empty row is dropped


def test_without_a_caption_the_row_starts_with_its_label():
    assert render_rows(TABLE[:2]) == ["Family Size 1 | Annual: $47,862 | Bi-Weekly: $1,841"]


def test_parse_row_reads_a_rendered_row_back():
    line = render_rows(TABLE, "Limits")[0]
    assert parse_row(line) == (["Limits", "Family Size 1"], [("Annual", "$47,862"), ("Bi-Weekly", "$1,841")])


def test_other_lines_are_not_rows():
    assert parse_row("Income Eligibility Limits") is None
    assert parse_row("Note: see page 3") is None
    assert parse_row("a | b") is None  # too few parts
    assert parse_row("A | x: 1 | label after cells") is None


def test_cells_are_one_line_and_cannot_fake_a_separator():
    assert clean_cell(" $ 4,106 \n") == "$4,106"
    assert clean_cell("a | b\nc") == "a / b c"
    assert clean_cell(None) == ""


def test_only_tables_with_a_named_header_are_rendered():
    assert is_header_table([["Size", "Annual"], ["1", "$5"]])
    assert not is_header_table([["Size", ""], ["1", "$5"]])
    assert not is_header_table([["Size", "Annual"]])
    assert not is_header_table([["Size"], ["1"]])
