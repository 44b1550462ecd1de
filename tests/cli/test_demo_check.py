"""The demo's check reads an answer's own statement: a wrong cell over the quoted right row is wrong."""

from __future__ import annotations

from rag_lab.cli.demo import SAMPLE_QUESTION, sample_check

ROW = ("“Income Eligibility Limits | Family Size 5 | Annual: $106,768 | Monthly: $8,897 | Weekly: $2,053 | "
       "Bi-Monthly: $4,449 | Bi-Weekly: $4,106” [Doc 1: bcy-26-income-eligibility-and-maximum-psoc-twc.pdf, Page 1, line 8]")


def test_a_wrong_cell_answer_quoting_the_right_row_fails_the_demo_check():
    assert "$4,106" in f"The maximum is $4,449.\n{ROW}"  # the old substring check passed it
    assert sample_check(f"The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,449.\n{ROW}").startswith("WRONG")


def test_the_right_sentence_passes_and_a_quote_alone_does_not():
    assert sample_check(f"The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,106.\n{ROW}") == "right"
    assert sample_check(ROW) == "WRONG (non-answer: quotes only, no statement)"
    assert sample_check("It is $4,449 or $4,106.").startswith("WRONG (also states")
    assert "family of 5" in SAMPLE_QUESTION
