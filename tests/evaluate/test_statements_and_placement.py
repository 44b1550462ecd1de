"""Answer measures a wrong answer cannot pass: statements scored apart from quotes, figures checked
where they belong. The contexts are a natural answer's own (datasets/texas_childcare_full/natural_answers:
the demo question's paraphrase, answered "$4,449" by the 1.5B model over the real retrieved chunks)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rag_lab.answer.statements import is_non_answer, split_statements, statement_text
from rag_lab.evaluate.facts.citations import check_citations
from rag_lab.evaluate.facts.key_facts import key_fact_precision, key_fact_recall
from rag_lab.evaluate.facts.placement import check_figures, context_lines, digits_for_words

ANSWERS = Path(__file__).resolve().parents[2] / "datasets/texas_childcare_full/natural_answers/answers.jsonl"
DEMO_ID = "texas_childcare_full/bcy-26-income-eligibility-and-maximum-psoc-twc-qa#Q4::qwen1.5b"


def _natural(record_id: str) -> dict:
    return next(r for r in map(json.loads, ANSWERS.read_text().splitlines()) if r["id"] == record_id)


@pytest.fixture(scope="module")
def demo():
    record = _natural(DEMO_ID)
    return {"question": record["question"], "contexts": [c["text"] for c in record["contexts"]],
            "answer": record["answer"], "quotes": record["answer"].split("\n", 1)[1]}


RIGHT = "The maximum income for a family of 5 earning bi-weekly is $4,106."
WRONG = "The maximum income for a family of 5 earning bi-weekly is $4,449."
ROW = ("“Income Eligibility Limits | Family Size 5 | Annual: $106,768 | Monthly: $8,897 | Weekly: $2,053 | "
       "Bi-Monthly: $4,449 | Bi-Weekly: $4,106” [Doc 1: bcy-26-income-eligibility-and-maximum-psoc-twc.pdf, Page 1, line 8]")


def test_statements_are_the_sentence_and_quotes_are_set_apart():
    said = split_statements(f"{RIGHT}\n{ROW}")
    assert said.statements.startswith(RIGHT) and "Bi-Monthly" not in said.statements
    assert said.quotes == [ROW.split("”")[0].lstrip("“")]
    assert "[Doc 1" in said.statements  # the quote's citation now cites the sentence above it
    # an inline quote followed by its citation, and a rebuilt answer (quotes on one line)
    assert statement_text('It says "the rate is set by each Board" [Doc 2] and no more.') == "It says [Doc 2] and no more."
    assert is_non_answer(f"{ROW} “Maximum Parent Share of Cost | Family Size 5 | Annual: $7,474” [Doc 1, line 24]")
    # a quote cut mid-row (no closing mark) is still a quote; quoted words in a sentence are not
    assert is_non_answer("“Income Eligibility Limits | Family Size 1 | Annual: $46,000 | … 0.000% FAMILY SIZE 2:")
    assert not is_non_answer("The “Bi-Weekly” column gives $4,106.") and not is_non_answer("$4,106")
    # a quoted name before its citation is part of the sentence; a quoted line of four words or more is not
    assert statement_text('The program is "Texas Rising Star" [Doc 1].') == 'The program is "Texas Rising Star" [Doc 1].'



def test_key_facts_read_the_statements_not_the_quote():
    reference, question = "$4,106", "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"
    assert key_fact_recall(f"{RIGHT}\n{ROW}", reference, question) == key_fact_recall(RIGHT, reference, question) == 1.0
    assert key_fact_precision(f"{RIGHT}\n{ROW}", reference, question) == 1.0  # the sentence's, not 0.2
    assert key_fact_recall(f"{WRONG}\n{ROW}", reference, question) == 0.0  # the row's $4,106 answers nothing
    assert key_fact_recall(ROW, reference, question) == 0.0  # quote only: a non-answer
    assert key_fact_precision(ROW, reference, question) is None


def test_string_metrics_score_a_right_sentence_plus_its_quote_as_the_sentence():
    from ragas.dataset_schema import SingleTurnSample

    from rag_lab.evaluate.metrics import all_specs

    specs = {s.name: s for s in all_specs()}
    reference = "The maximum bi-weekly income for a family of 5 is $4,106."

    def score(name: str, response: str) -> float:
        metric = specs[name].build(None)
        return asyncio.run(metric.single_turn_ascore(SingleTurnSample(response=response, reference=reference)))

    for name in ("rouge_l", "string_similarity"):
        assert score(name, f"{RIGHT}\n{ROW}") == pytest.approx(score(name, RIGHT))
        assert score(name, ROW) == 0.0  # a non-answer


def test_citations_under_no_statement_are_unverifiable_never_precise(demo):
    check = check_citations(demo["quotes"], demo["contexts"])
    assert check.checked == 0 and check.unverifiable == 3 and check.precision is None
    # under a statement, a quote's citation is checked against the statement's facts
    right = check_citations(f"{RIGHT}\n{ROW}", demo["contexts"])
    assert right.checked == 1 and right.correct == 1
    numberless = check_citations("Parents must report changes.\n“See the guide” [Doc 2: guide.pdf, Page 3, line 4]",
                                 demo["contexts"])
    assert numberless.checked == 0 and numberless.unverifiable == 1 and numberless.precision is None


@pytest.mark.parametrize("answer, flaw", [
    (WRONG, "misplaced"),  # the Bi-Monthly cell of the right row
    ("The maximum income for a family of 5 earning bi-weekly is $8,481.", "misplaced"),  # a monthly SMI threshold
    ("The maximum income for a family of 5 earning bi-weekly is $5,098.", "misplaced"),  # the Family Size 10 row
    ("The maximum income for a family of 5 earning bi-weekly is $287.", "misplaced"),  # the parent-share table
    ("The maximum is four thousand four hundred forty-nine dollars.", "misplaced"),
    ("The maximum income for a family of 5 earning bi-weekly is $5.", "uncontained"),  # the question's 5
    ("A family of 5 must attend 12 meetings.", "uncontained"),  # 12 months, 12 weeks: not meetings
    ("A family of 5 pays a $25 fee.", "uncontained"),
    ("The maximum is four thousand one hundred sixteen dollars.", "uncontained"),
])
def test_each_adversarial_figure_is_caught_by_the_right_measure(demo, answer, flaw):
    check = check_figures(answer, demo["contexts"], demo["question"])
    assert check.stated and getattr(check, flaw) == check.stated
    other = "uncontained" if flaw == "misplaced" else "misplaced"
    assert getattr(check, other) == []


def test_right_answers_pass_both(demo):
    for answer in (RIGHT, f"{RIGHT}\n{ROW}", "The maximum is four thousand one hundred six dollars.",
                   "Eligibility lasts 12 months; the annual limit is $106,768."):
        check = check_figures(answer, demo["contexts"], demo["question"])
        assert check.stated and check.uncontained == [] and check.misplaced == [], answer
    # the natural answer itself: $4,449 over its cited rows, one of them holding $4,106
    assert check_figures(demo["answer"], demo["contexts"], demo["question"]).misplaced == ["money_4449"]


def test_a_money_figure_never_matches_a_pdf_line_number():
    chunk = "\n".join(["16", "17 Child care providers have been expressing concern about child care",
                       "18 employment levels, and staff compensation and benefits.", "19 been rising slowly."])
    assert [ln.text for ln in context_lines([chunk])][1].startswith("Child care providers")
    assert check_figures("Providers were paid $18 more.", [chunk]).uncontained == ["money_18"]
    assert check_figures("17 providers expressed concern.", [chunk]).uncontained == ["17 provider"]


def test_numbers_in_words_are_read():
    assert digits_for_words("four thousand one hundred six dollars") == "4106 dollars"
    assert digits_for_words("twelve meetings, one of the rules") == "12 meetings, one of the rules"
