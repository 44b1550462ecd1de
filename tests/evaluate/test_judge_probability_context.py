"""Context recall and context precision by probability verdicts (judge/probability_context.py)."""

from __future__ import annotations

import pytest

from rag_lab.evaluate.judge.probability_context import soft_average_precision


def test_soft_average_precision_is_ragas_formula_for_0_1_verdicts():
    from ragas.metrics._context_precision import LLMContextPrecisionWithReference, Verification

    ragas_metric = LLMContextPrecisionWithReference()
    for verdicts in ([1, 0, 1], [0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1], [0, 0]):
        expected = ragas_metric._calculate_average_precision([Verification(reason="", verdict=v) for v in verdicts])
        assert soft_average_precision([float(v) for v in verdicts]) == pytest.approx(expected, abs=1e-8)
    # soft verdicts: a useful context ranked first scores above the same context ranked last
    assert soft_average_precision([0.9, 0.1, 0.1]) > soft_average_precision([0.1, 0.1, 0.9])


RELEVANT = ("Income eligibility, Board Contract Year 2026. Family of 4: annual income limit $92,041; "
            "monthly $7,670. Parents must report changes within 14 calendar days.")
OTHER = ("Provider reimbursement rates for licensed centers are set by each Local Workforce Development Board. "
         "Rates are paid per day of attendance.")
REFERENCE = "For a family of 4 the annual income limit is $92,041. Parents must report changes within 14 days."


@pytest.mark.slow
def test_context_metrics_on_the_real_model_by_probability_verdicts():
    """The local 1.5B judge's default (probability verdicts): the context that states the reference
    ranks above an unrelated one for precision, and recall falls when only the unrelated one is retrieved."""
    from rag_lab.config import Settings
    from rag_lab.evaluate.judge import build_judge, judge_id
    from rag_lab.evaluate.run.scorer import Scorer

    settings = Settings(_env_file=None, llm_provider="local")  # type: ignore[call-arg]
    assert "-ctx" in judge_id(settings)
    metrics = ["llm_context_recall", "llm_context_precision_with_reference"]
    scorer = Scorer(settings, judge_llm=build_judge(settings), metrics=metrics)

    def score(contexts: list[str]) -> dict[str, float]:
        record = {"id": "q", "question": "What is the annual income limit for a family of 4, and when must "
                  "parents report changes?", "answer": "$92,041.", "reference": REFERENCE,
                  "contexts": [{"text": t, "filename": "x.pdf"} for t in contexts]}
        found, errors = scorer.score(record)
        assert errors == {}
        return found

    relevant_first, relevant_last, unrelated = score([RELEVANT, OTHER]), score([OTHER, RELEVANT]), score([OTHER])
    key = "llm_context_precision_with_reference"
    assert relevant_first[key] > relevant_last[key]
    assert relevant_first["llm_context_recall"] > unrelated["llm_context_recall"]
    assert unrelated["llm_context_recall"] < 0.5  # "$92,041" and "14" are stated nowhere: the numbers rule
