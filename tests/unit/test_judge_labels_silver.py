"""The silver label of table 2: every key fact the answer states (citation markers ignored) is in its contexts."""

from __future__ import annotations

from benchmarks.judge_labels.silver import silver_supported

CONTEXTS = [{"text": "Family of 4 | Monthly: $4,106 | 85% SMI", "filename": "bcy-26.pdf"},
            {"text": "Parents have 14 days to appeal.", "filename": "rights.pdf"}]


def test_numbers_from_the_contexts_are_supported_whatever_the_citation_markers_say():
    answer = "A family of 4 may earn up to 4,106 a month [Doc 1: bcy-26.pdf, Page 7]; appeals take 14 days (Doc 2)."
    assert silver_supported(answer, CONTEXTS)


def test_a_number_the_contexts_do_not_state_is_unsupported():
    assert not silver_supported("Parents have 30 days to appeal [Doc 2: rights.pdf, Page 4].", CONTEXTS)
    assert not silver_supported("The limit is 90% SMI.", CONTEXTS)


def test_an_answer_without_key_facts_counts_as_supported():
    assert silver_supported("You can appeal the decision [Doc 2: rights.pdf, Page 4].", CONTEXTS)
