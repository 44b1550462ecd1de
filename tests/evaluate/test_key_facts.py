"""Key-fact recall on real answers to the BCY 2026 income question (hand-checked values)."""

import pytest

from rag_lab.evaluate.facts.key_facts import (
    claimed_text,
    extract_key_facts,
    has_key_facts,
    is_refusal,
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


# --- facts the question states are not the answer's; a dump loses precision ----
QUESTION = "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"


def test_echoing_the_question_earns_no_recall():
    # before: the reference's "5" and "BCY 2026" were counted, so the echo scored 2/4
    assert key_fact_recall(QUESTION, REFERENCE, QUESTION) == 0.0
    assert key_fact_precision(QUESTION, REFERENCE, QUESTION) is None  # the echo states nothing of its own
    assert missing_key_facts(QUESTION, REFERENCE, QUESTION) == ["dollar_4106", "percent_85"]


def test_i_do_not_know_earns_nothing():
    answer = "I do not know the bi-weekly income for a family of 5 in BCY 2026."
    # a refusal names what it does not know, which is no claim (its "5" and "BCY 2026" are not facts)
    assert key_fact_recall(answer, "The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,106.") == 0.0
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


# --- every way of writing a year or a year range is one fact; a refusal earns nothing --
@pytest.mark.parametrize("answer", [
    "FFY 2025 to FFY 2027", "from 2025 to 2027", "2025-2027", "2025–2027", "2025 — 2027", "FY2025-FY2027",
    "FY 2025-27", "federal fiscal years 2025 through 2027", "between 2025 and 2027", "BCY 25-27",
])
def test_every_form_of_a_year_range_states_the_reference_range(answer):
    reference = "The state plan is covering 2025-2027."
    assert extract_key_facts(answer) == extract_key_facts(reference) == {"years_2025_2027"}
    assert key_fact_recall(f"The plan covers {answer}.", reference) == 1.0
    assert key_fact_precision(f"The plan covers {answer}.", reference) == 1.0


def test_a_range_is_stated_only_by_the_same_range_but_states_its_end_years():
    reference = "covering 2025-2027"
    assert key_fact_recall("It covers 2025 only.", reference) == 0.0  # half a range is not the range
    assert key_fact_recall("FFY 2025 to FFY 2026", reference) == 0.0
    assert key_fact_recall("The plan covers 2025-2027.", "The plan starts in FFY 2025.") == 1.0


@pytest.mark.parametrize("text", ["a date 10/1/2025-9/30/2026", "pages 10-20", "$2,025-$3,000", "from 2027 to 2025"])
def test_what_is_no_year_range_stays_as_it_was(text):
    assert not any(fact.startswith("years_") for fact in extract_key_facts(text))


@pytest.mark.parametrize("form", ["FFY 2025", "FY2025", "FY 25", "fiscal year 2025", "Federal Fiscal Year (FFY) 2025", "2025"])
def test_every_form_of_a_year_states_that_year(form):
    for reference in ("The rates took effect in 2025.", "The rates took effect in FFY 2025.", "in BCY-25"):
        assert key_fact_recall(f"They took effect in {form}.", reference) == 1.0, (form, reference)
    assert key_fact_recall(f"in {form}", "in FFY 2026") == 0.0  # another year is another fact


def test_bcy_codes_and_a_year_written_twice_are_one_fact():
    assert extract_key_facts("BCY 2026") == extract_key_facts("BCY-26") == extract_key_facts("BCY26") == {"bcy26"}
    reference = "For BCY 2026 (the 2026 board contract year): $4,106"
    assert key_fact_recall("$4,106 in 2026", reference) == 1.0
    assert key_fact_recall("$4,106", reference) == 0.5  # two facts, not three
    assert missing_key_facts("$4,106", reference) == ["2026"]


REFUSALS = [
    "I do not know the maximum bi-weekly income for a family of 5 in BCY 2026.",
    "I don't know the bi-weekly limit in BCY 2026 [Doc 1].",
    "I couldn't find information about that.",  # the prompt's own reply (rag_lab.answer.prompt.NO_ANSWER)
    "The provided context does not contain the limit for a family of 5 in BCY 2026.",
    "The documents don't mention the BCY 2026 limit for 5 people.",
    "I'm sorry, I cannot answer that from the documents for BCY 2026.",
    "There is not enough information in the context about BCY 2026.",
]


@pytest.mark.parametrize("answer", REFUSALS)
def test_a_refusal_earns_no_recall_and_has_no_precision(answer):
    # a refusal that names the reference's scoping code still earns no recall and has no precision
    reference = "For a family of 5 in BCY 2026 the maximum bi-weekly income is $4,106."
    assert is_refusal(answer)
    assert claimed_text(answer) == ""
    assert key_fact_recall(answer, reference) == 0.0
    assert key_fact_precision(answer, reference) is None
    assert missing_key_facts(answer, reference) == ["5", "bcy26", "dollar_4106"]


def test_a_hedged_answer_keeps_the_facts_of_what_it_does_claim():
    reference = "For a family of 5 in BCY 2026 the bi-weekly limit is $4,106 and the monthly limit $8,897."
    hedged = "I don't know the monthly limit, but the bi-weekly limit for a family of 5 in BCY 2026 is $4,106."
    assert key_fact_recall(hedged, reference) == pytest.approx(3 / 4)
    assert key_fact_precision(hedged, reference) == 1.0
    two_sentences = "The bi-weekly limit in BCY 2026 is $4,106. I could not find the monthly limit for 5 people."
    assert key_fact_recall(two_sentences, reference) == pytest.approx(2 / 4)  # the "5" of the refusal is no claim


@pytest.mark.parametrize("answer", [
    "The bi-weekly limit is $4,106; no co-payment is charged.",
    "Families do not pay more than 7% of income.",
    "The context says the limit is $4,106.",
])
def test_answers_that_only_contain_negations_are_no_refusals(answer):
    assert not is_refusal(answer)
    assert claimed_text(answer).strip()


def test_units_scales_and_shares_are_read():
    from rag_lab.evaluate.facts.key_facts import key_fact_precision, key_fact_recall

    # a percentage is not the amount that shares its digits
    assert key_fact_recall("It is 4,106 percent.", "The limit is $4,106.") == 0.0
    assert key_fact_recall("It is 4,106%.", "The limit is $4,106.") == 0.0
    assert key_fact_recall("It is 4,106 percent.", "It rose 4,106%.") == 1.0
    # scale words: the same amount however written; a different scale is a different amount
    assert key_fact_recall("It is $1.2 million.", "The grant is $1,200,000.") == 1.0
    assert key_fact_recall("It is 1.2 million dollars.", "The grant is $1,200,000.") == 1.0
    assert key_fact_recall("It is $1.2 thousand.", "The grant is $1,200,000.") == 0.0
    assert key_fact_precision("The grant is $1,200,000.", "It is $1.2 million.") == 1.0
    # a fraction states the percentage it equals, and only that one
    assert key_fact_recall("The rate is 0.85.", "The rate is 85%.") == 1.0
    assert key_fact_recall("The rate is 85 percent.", "The share is 0.85.") == 1.0
    assert key_fact_recall("The rate is 0.86.", "The rate is 85%.") == 0.0


def test_a_refusal_ends_at_a_comma_and_a_hedged_figure_is_a_claim():
    from rag_lab.evaluate.facts.key_facts import claimed_text, key_fact_precision, key_fact_recall

    assert key_fact_recall("The documents do not specify a cap, the limit is $4,106.", "The limit is $4,106.") == 1.0
    assert key_fact_precision("I cannot confirm it, it may be $287.", "The limit is $4,106.") == 0.0
    assert key_fact_precision("I cannot confirm the $287 figure.", "The limit is $4,106.") is None  # a pure refusal
    assert "287" not in claimed_text("I don't know whether it is $287.")


def test_a_legislatures_ordinal_states_its_number_but_not_the_reverse():
    """A page footer "Report to the 89th Texas / Legislature" reads as the code leg89; a quote of it that
    stops before "Legislature" reads as the number 89, which the page does print: stated, so no invented
    figure and no loss of precision. The code itself is stated only by the code (recall)."""
    footer = "Evaluation of the Effectiveness of the Subsidized Child Care Program—Report to the 89th Texas\nLegislature 1"
    cut = "Report to the 89th Texas"
    assert key_fact_precision(cut, footer) == 1.0
    assert key_fact_precision("89 percent", footer) == 0.0  # a percentage is no ordinal
    assert key_fact_recall(cut, footer) == 0.0
