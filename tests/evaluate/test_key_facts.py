"""Key-fact recall on real answers to the BCY 2026 income question (hand-checked values)."""

import pytest

from rag_lab.evaluate.key_facts import (
    extract_key_facts,
    has_key_facts,
    key_fact_precision,
    key_fact_recall,
    missing_key_facts,
)

REFERENCE = "For a family of 5 in BCY 2026 the maximum bi-weekly income is $4,106 (85% of SMI)."


def test_extracts_normalised_facts():
    assert extract_key_facts(REFERENCE) == {"5", "bcy26", "dollar_4106", "percent_85"}
    assert extract_key_facts("no numbers here") == set()


def test_a_spelled_out_program_year_is_the_same_fact_as_its_code():
    # "Board Contract Year 2026" states bcy26, as "BCY 2026" does: not a second fact "2026" that an
    # answer writing the code would miss
    assert extract_key_facts("Board Contract Year 2026: $4,106") == extract_key_facts("BCY 2026: $4,106") \
        == {"bcy26", "dollar_4106"}
    assert extract_key_facts("federal fiscal year 2023") == {"ffy23"}


def test_correct_answer_states_every_fact():
    answer = "The maximum bi-weekly income for a family of 5 in BCY-26 is $4106, i.e. 85 percent of SMI [Doc 1]."
    assert key_fact_recall(answer, REFERENCE) == 1.0


def test_wrong_number_loses_that_fact():
    # the offline SmolLM2 answer seen in the demo
    answer = "The maximum bi-weekly income for a family of 5 is $1,098,545,000."
    assert key_fact_recall(answer, REFERENCE) == pytest.approx(1 / 4)
    assert missing_key_facts(answer, REFERENCE) == ["bcy26", "dollar_4106", "percent_85"]


def test_money_and_bare_amounts_are_interchangeable_but_percent_is_not():
    assert key_fact_recall("Family size 5: 4,106", "$4,106 for 5 people") == 1.0
    assert key_fact_recall("It is $92,041 a year", "92,041") == 1.0
    assert key_fact_recall("85 children", "85%") == 0.0


def test_reference_without_facts_has_no_score():
    assert key_fact_recall("anything", "Parents choose a provider.") is None


# --- issue 20, point 7: facts the question states are not the answer's; a dump loses precision ----
QUESTION = "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"


def test_echoing_the_question_earns_no_recall():
    # before: the reference's "5" and "BCY 2026" were counted, so the echo scored 2/4
    assert key_fact_recall(QUESTION, REFERENCE, QUESTION) == 0.0
    assert key_fact_precision(QUESTION, REFERENCE, QUESTION) is None  # the echo states nothing of its own
    assert missing_key_facts(QUESTION, REFERENCE, QUESTION) == ["dollar_4106", "percent_85"]


def test_i_do_not_know_earns_nothing():
    answer = "I do not know the bi-weekly income for a family of 5 in BCY 2026."
    assert key_fact_recall(answer, "The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,106.") == pytest.approx(2 / 3)
    assert key_fact_recall(answer, "The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,106.",
                           QUESTION) == 0.0
    assert key_fact_precision(answer, REFERENCE, QUESTION) is None


def test_a_number_dump_keeps_recall_but_loses_precision():
    context = ("Family Size 4 | Bi-Weekly: $3,540 | Monthly: $7,670\n"
               "Family Size 5 | Bi-Weekly: $4,106 | Monthly: $8,897\nAll limits are 85% of SMI.")
    dump = "4, $3,540, $7,670, 5, $4,106, $8,897, 85%"
    assert key_fact_recall(dump, REFERENCE, QUESTION) == 1.0
    # its own facts: 4, 3540, 7670, 4106, 8897, 85% (5 is the question's); the reference states 2
    assert key_fact_precision(dump, REFERENCE, QUESTION) == pytest.approx(2 / 6)
    assert key_fact_precision(context, REFERENCE, QUESTION) == pytest.approx(2 / 6)


def test_the_right_answer_scores_full_recall_and_precision():
    answer = ("The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,106, 85% of SMI "
              "[Doc 1: bcy-26-income-eligibility-and-maximum-psoc-twc.pdf, Page 1].")
    # the citation marker's "bcy-26" and "Page 1" are not facts the answer states
    assert key_fact_recall(answer, REFERENCE, QUESTION) == 1.0
    assert key_fact_precision(answer, REFERENCE, QUESTION) == 1.0
    assert key_fact_recall("It is $4,106 [Doc 1: bcy-26-x.pdf, Page 1].", "For BCY 2026: $4,106.") == 0.5


def test_a_reference_whose_facts_are_all_in_the_question_has_no_recall():
    # nothing to check: recall is undefined (an echo of the question must not score 1.0)
    question = "Is the bi-weekly limit for a family of 5 $4,106?"
    assert key_fact_recall(question, "Yes, $4,106 for a family of 5.", question) is None
    assert not has_key_facts("Yes, $4,106 for a family of 5.", question)
    assert has_key_facts("Yes, $4,106 for a family of 5.")
    assert key_fact_precision("Yes, and $8,897 monthly.", "Yes, $4,106 for a family of 5.", question) == 0.0
