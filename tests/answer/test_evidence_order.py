"""The order evidence units are taken in and the lines around the first ones (rag_lab.answer.evidence_order)."""

from __future__ import annotations

from datetime import date

from rag_lab.answer.evidence_order import (capped_rows, dates_and_numbers, evidence_order, figures_first,
                                           named_rows_first, names_row, row_label, widened, with_chunk_prior)

SCHEDULE = "2025 CCS PAYMENT SCHEDULE | Payment Service Dates {} | Payment Date Issued: {}"
INCOME = "Income Eligibility Limits | Family Size {n} | Annual: ${a} | Bi-Weekly: ${b}"
SHARE = "Maximum Parent Share of Cost | Family Size {n} | Bi-Weekly: ${b}"


def test_dates_are_read_in_both_forms_and_numbers_without_separators():
    assert dates_and_numbers("from January 27, 2025 to Feb. 9, 2025") == ([date(2025, 1, 27), date(2025, 2, 9)], set())
    assert dates_and_numbers("Payment Service Dates 1/27/2025 - 2/09/2025") == (
        [date(2025, 1, 27), date(2025, 2, 9)], set())
    assert dates_and_numbers("a family of 5 earning 1,200 in 007 days") == ([], {"5", "1200", "7"})
    assert dates_and_numbers("due Sept 30, 2025, not 13/45/2025") == ([date(2025, 9, 30)], set())


def test_a_row_label_is_named_by_its_numbers_or_by_a_date_of_its_range():
    question = "If a family of 5 earns income bi-weekly, what is their maximum income in BCY 2026?"
    assert names_row(question, "Family Size 5")
    assert not names_row(question, "Family Size 15")  # 15 is not a number of the question
    assert not names_row(question, "Family Size 4")
    assert not names_row(question, "Provider Type LCCC")  # a label without numbers is never named
    assert names_row("payment for services from January 27, 2025 to February 9, 2025?",
                     "Payment Service Dates 1/27/2025 - 2/09/2025")
    assert names_row("When is the payment for care on February 3, 2025 issued?",
                     "Payment Service Dates 1/27/2025 - 2/09/2025")  # within the range
    assert not names_row("When is the payment for care on February 10, 2025 issued?",
                         "Payment Service Dates 1/27/2025 - 2/09/2025")


def test_row_label_splits_caption_and_label_and_ignores_prose():
    assert row_label(INCOME.format(n=5, a="106,768", b="4,106")) == ("Income Eligibility Limits", "Family Size 5")
    assert row_label("Family Size 5 | Annual: $106,768 | Monthly: $8,897") == ("", "Family Size 5")
    assert row_label("Families must have a gross income at or below 85% of the SMI.") is None


def test_the_chunk_prior_lifts_a_unit_of_a_better_ranked_chunk():
    # units 0 and 3 sit in the second chunk, 1 and 2 in the first; both scorers rank 0, 3, 1, 2
    legs = {"bm25": [0, 3, 1, 2], "dense": [0, 3, 1, 2]}
    # the chunk leg (1, 2, 0, 3) at weight 0.5, k 10: 0 → 2/11 + 1/16, 1 → 2/13 + 1/12, 3 → 2/12 + 1/18
    assert with_chunk_prior(legs, [0, 3, 1, 2], chunk_of=[2, 1, 1, 2], k=10) == [0, 1, 3, 2]


def test_units_stating_a_figure_come_first_each_group_in_order():
    texts = ["The program serves families.", "Families may earn up to 85% of the SMI.", "Apply online.",
             "BCY 2026 limits"]
    assert figures_first([0, 1, 2, 3], texts) == [1, 3, 0, 2]


def test_named_rows_go_first_and_the_other_rows_of_their_tables_last():
    texts = [INCOME.format(n=4, a="92,041", b="3,540"),  # 0
             "The limits apply from October 1, 2025.",  # 1
             INCOME.format(n=5, a="106,768", b="4,106"),  # 2: named
             SHARE.format(n=4, b="250"),  # 3: another table, no row of it named
             INCOME.format(n=6, a="121,496", b="4,673")]  # 4
    question = "What is the maximum bi-weekly income for a family of 5?"
    assert named_rows_first([0, 1, 2, 3, 4], texts, [1] * 5, question) == [2, 1, 3, 0, 4]
    # the same caption in another chunk is another table: its rows are not demoted
    assert named_rows_first([0, 1, 2, 3, 4], texts, [2, 1, 1, 1, 1], question) == [2, 0, 1, 3, 4]
    assert named_rows_first([0, 1, 3], texts, [1] * 5, question) == [0, 1, 3]  # no row named: unchanged


def test_at_most_two_rows_of_a_table_come_before_the_other_units():
    texts = [INCOME.format(n=n, a="1", b="2") for n in (1, 2, 3)] + ["prose", SHARE.format(n=1, b="3")]
    assert capped_rows([0, 1, 2, 3, 4], texts, [1] * 5) == [0, 1, 3, 4, 2]
    assert capped_rows([0, 1, 2, 3, 4], texts, [1, 1, 2, 1, 1]) == [0, 1, 2, 3, 4]  # row 2 in another chunk


def test_the_order_applies_prior_figures_named_rows_and_the_cap_in_turn():
    texts = ["Who may apply?", INCOME.format(n=4, a="92,041", b="3,540"), INCOME.format(n=6, a="121,496", b="4,673"),
             INCOME.format(n=7, a="124,256", b="4,779"), INCOME.format(n=5, a="106,768", b="4,106")]
    legs = {"bm25": [0, 1, 2, 3, 4], "dense": [0, 1, 2, 3, 4]}
    question = "What is the income limit for a family of 5?"
    # figures first puts 0 last; the named row 4 goes first, its table's other rows after the prose
    assert evidence_order(question, texts, [1] * 5, legs, [0, 1, 2, 3, 4], 10) == [4, 0, 1, 2, 3]
    # no row named: the cap of two rows a table sends the third row after the prose line
    assert evidence_order("What are the income limits?", texts, [1] * 5, legs, [0, 1, 2, 3, 4], 10) == [1, 2, 0, 3, 4]


def test_the_first_units_are_widened_by_a_line_each_side_never_onto_another_units_line():
    chunk = ["title", "a line before", "the fact is here", "a line after", "another unit", "last line"]
    spans = [(0, 2, 2), (0, 4, 4)]
    assert widened(spans, ["the fact is here", "another unit"], [chunk], "q", top=1) == [
        (1, 3, "a line before the fact is here a line after"), (4, 4, "another unit")]
    # the second unit widens after the first took line 3: back onto nothing, ahead onto line 5
    assert widened(spans, ["the fact is here", "another unit"], [chunk], "q", top=2) == [
        (1, 3, "a line before the fact is here a line after"), (4, 5, "another unit last line")]
    # three lines each side stop at the chunk's start and at a line another unit holds
    assert widened([(0, 1, 1), (0, 4, 4)], ["a line before", "another unit"], [chunk], "q", top=1, lines=3) == [
        (0, 3, "title a line before the fact is here a line after"), (4, 4, "another unit")]


def test_a_named_row_and_a_line_the_unit_holds_already_are_not_added():
    rows = [INCOME.format(n=n, a="1", b="2") for n in (4, 5, 6)]
    chunk = ["Income Eligibility Limits", *rows]
    question = "What is the limit for a family of 5?"
    assert widened([(0, 2, 2)], [rows[1]], [chunk], question) == [(2, 2, rows[1])]
    assert widened([(0, 2, 2)], [rows[1]], [chunk], "What are the limits?") == [(1, 3, " ".join(rows))]
    bare = ["Age group Infants Toddlers", "2024 12,410 18,233"]
    assert widened([(0, 1, 1)], ["Age group Infants Toddlers | 2024 12,410 18,233"], [bare], "q") == [
        (1, 1, "Age group Infants Toddlers | 2024 12,410 18,233")]
