"""Key-fact recall and precision through the scorer (the RAGAS metrics `rag-lab eval` reports), on the
three degenerate answers to a real texas_childcare_full question, and the echo
of the question over every judged question of the dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_lab.evaluate.facts.key_facts import has_key_facts, key_fact_recall
from rag_lab.evaluate.run.scorer import Scorer

QA = Path(__file__).resolve().parents[2] / "datasets" / "texas_childcare_full" / "qa.jsonl"
QUESTION = "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"
REFERENCE = "The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,106."
CONTEXT = ("Income Eligibility Limits | Family Size 4 | Annual: $92,041 | Monthly: $7,670 | Bi-Weekly: $3,540\n"
           "Income Eligibility Limits | Family Size 5 | Annual: $106,768 | Monthly: $8,897 | Bi-Weekly: $4,106")


def _record(answer: str) -> dict:
    return {"id": "q", "question": QUESTION, "answer": answer, "reference": REFERENCE,
            "contexts": [{"doc_id": "bcy.pdf", "filename": "bcy.pdf", "text": CONTEXT}]}


@pytest.fixture(scope="module")
def scorer(request):
    settings = request.getfixturevalue("lab_settings")
    return Scorer(settings, metrics=["key_fact_recall", "key_fact_precision"])


@pytest.mark.parametrize(("answer", "recall", "precision"), [
    (QUESTION, 0.0, None),  # the echo: before, recall 2/3 ("5" and "BCY 2026" were counted)
    ("I do not know the bi-weekly income for a family of 5 in BCY 2026.", 0.0, None),  # before: 2/3
    # every number of the context: recall 1.0 before and now; precision 1 of its 7 own facts ("5" is the question's)
    ("4, $92,041, $7,670, $3,540, 5, $106,768, $8,897, $4,106", 1.0, 1 / 7),
    ("The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,106 [Doc 1].", 1.0, 1.0),
])
def test_degenerate_answers(scorer, answer, recall, precision):
    scores, errors = scorer.score(_record(answer))
    assert errors == {}
    assert scores["key_fact_recall"] == pytest.approx(recall)
    if precision is None:
        assert "key_fact_precision" not in scores  # the answer states no fact of its own: not applicable
    else:
        assert scores["key_fact_precision"] == pytest.approx(precision)


def test_echoing_the_question_earns_nothing_on_the_whole_dataset():
    records = [json.loads(line) for line in QA.read_text().splitlines() if line.strip()]
    scored = [r for r in records if has_key_facts(r["reference_answer"], r["question"])]
    assert len(scored) > 100
    assert all(key_fact_recall(r["question"], r["reference_answer"], r["question"]) == 0.0 for r in scored)
    # the metric before (question facts counted): the echo earned a share of the facts
    before = [key_fact_recall(r["question"], r["reference_answer"]) for r in records]
    assert sum(v for v in before if v) / len([v for v in before if v is not None]) > 0.05


def test_coverage_of_the_chunks_and_the_evidence_stands_beside_the_answers_recall(lab_settings):
    """Where a fact was lost: the chunks state the reference's $4,106, the selected evidence does not
    (the family-of-4 row was chosen), so the answer cannot: recall 0 is a selection loss, not a writing one."""
    from rag_lab.evaluate.store.frames import metric_order
    from rag_lab.report.metric_notes import cutoff, definition

    scorer = Scorer(lab_settings, metrics=["key_fact_recall", "context_key_fact_coverage", "evidence_key_fact_coverage"])
    wrong_row = {"doc": 1, "first_line": 1, "last_line": 1, "text": CONTEXT.splitlines()[0]}
    record = _record("The limit for a family of 4 is $3,540.") | {"evidence": [wrong_row]}
    scores, errors = scorer.score(record)
    assert errors == {}
    assert scores == {"key_fact_recall": 0.0, "context_key_fact_coverage": 1.0, "evidence_key_fact_coverage": 0.0}
    right_row = {"doc": 1, "first_line": 2, "last_line": 2, "text": CONTEXT.splitlines()[1]}
    scores, _ = scorer.score(record | {"evidence": [right_row], "answer": "It is $4,106."})
    assert scores["evidence_key_fact_coverage"] == 1.0 and scores["key_fact_recall"] == 1.0
    free, _ = scorer.score(_record("It is $4,106."))  # a free-form answer has no evidence: no evidence coverage
    assert "evidence_key_fact_coverage" not in free and free["context_key_fact_coverage"] == 1.0
    no_facts, _ = scorer.score(_record("x") | {"reference": "Yes, they can."})  # recall undefined: coverage too
    assert not set(no_facts) & {"context_key_fact_coverage", "evidence_key_fact_coverage"}
    order = metric_order(["evidence_key_fact_coverage", "rouge_l", "key_fact_recall", "context_key_fact_coverage",
                          "key_fact_precision"])
    at = order.index("key_fact_precision")
    assert order[at + 1:at + 3] == ["context_key_fact_coverage", "evidence_key_fact_coverage"]
    assert "chunks given to the LLM" in definition("context_key_fact_coverage")
    assert cutoff("evidence_key_fact_coverage", 5) == "the evidence selected from the top-5 chunks the LLM read"
