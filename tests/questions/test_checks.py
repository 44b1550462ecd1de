"""Every check a synthetic question must pass rejects what it names, and only that."""

from __future__ import annotations

from rag_lab.evaluate.questions import checks
from rag_lab.evaluate.questions.checks import check

CHUNK = ("Child care providers in Harris County receive a daily rate of $42.50 for infants and $38.00 for "
         "toddlers under the Board's 2025 payment schedule. Providers must submit attendance records every "
         "two weeks to remain eligible for reimbursement.")


def test_a_good_question_passes_and_its_overlap_is_measured():
    verdict = check("What daily reimbursement does Harris County pay for infant care in 2025?", "$42.50", CHUNK,
                    max_overlap=1.0)
    assert verdict.reason is None
    assert 0 < verdict.overlap <= 1 and verdict.copied_span < checks.COPIED_SPAN_TOKENS


def test_a_question_copying_its_chunk_is_rejected():
    copied = "Do providers have to submit attendance records every two weeks to remain eligible for reimbursement?"
    assert check(copied, "Yes", CHUNK, max_overlap=1.0).reason == checks.COPIES_SOURCE


def test_a_question_pointing_at_the_table_above_is_rejected():
    for question in ("What is the infant rate in the table above?", "According to the passage, what is the rate?",
                     "What does this document say about toddlers?"):
        assert check(question, "$42.50", CHUNK, max_overlap=1.0).reason == checks.NOT_SELF_CONTAINED, question


def test_a_reference_figure_not_in_its_chunk_is_rejected():
    question = "What daily reimbursement does Harris County pay for infant care in 2025?"
    assert check(question, "$45.00", CHUNK, max_overlap=1.0).reason == checks.FIGURE_NOT_IN_SOURCE
    assert check(question, "42.50 dollars", CHUNK, max_overlap=1.0).reason is None  # the same value, written otherwise


def test_a_reference_the_chunk_does_not_state_is_rejected():
    question = "Which agency audits child care payments in Harris County each year?"
    assert check(question, "The State Comptroller audits them", CHUNK, max_overlap=1.0).reason == \
        checks.ANSWER_NOT_IN_SOURCE


def test_a_question_above_the_human_overlap_bound_is_rejected():
    question = "What daily rate do Harris County providers receive for infants?"
    assert check(question, "$42.50", CHUNK, max_overlap=1.0).reason is None
    assert check(question, "$42.50", CHUNK, max_overlap=0.5).reason == checks.TOO_LEXICAL


def test_near_duplicates_are_removed():
    first = "What daily reimbursement does Harris County pay for infant care in 2025?"
    again = "In 2025, what daily reimbursement does Harris County pay for infant care?"
    kept = [checks.tokens(first)]
    assert check(again, "$42.50", CHUNK, max_overlap=1.0, accepted=kept).reason == checks.NEAR_DUPLICATE
    other = "How often must Harris County child care providers send attendance records?"
    assert check(other, "every two weeks", CHUNK, max_overlap=1.0, accepted=kept).reason is None


def test_a_reply_cut_at_its_length_cap_is_rejected():
    long_question = "Is it true that " + "the Harris County board pays providers " * 10
    assert check(long_question[:checks._QUESTION_CAP], "Yes", CHUNK, max_overlap=1.0).reason == checks.CUT_AT_LENGTH


def test_too_short_questions_are_rejected():
    assert check("Infant rate?", "$42.50", CHUNK, max_overlap=1.0).reason == checks.TOO_SHORT
