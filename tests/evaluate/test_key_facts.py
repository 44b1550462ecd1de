"""Key-fact recall on real answers to the BCY 2026 income question (hand-checked values)."""

import pytest

from rag_lab.evaluate.key_facts import extract_key_facts, key_fact_recall, missing_key_facts

REFERENCE = "For a family of 5 in BCY 2026 the maximum bi-weekly income is $4,106 (85% of SMI)."


def test_extracts_normalised_facts():
    assert extract_key_facts(REFERENCE) == {"5", "bcy26", "dollar_4106", "percent_85"}
    assert extract_key_facts("no numbers here") == set()


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
