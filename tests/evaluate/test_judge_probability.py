"""Verdicts by probability with evidence by code and statements by code."""

from __future__ import annotations

import asyncio
import math

import pytest

from rag_lab.evaluate.judge.code_split import split_statements
from rag_lab.evaluate.judge.evidence import best_evidence
from rag_lab.evaluate.judge.probability import cut_score, premise_sha, yes_probability

CONTEXT = ("Income eligibility for Board Contract Year 2026.\n"
           "Family Size | Annual | Monthly\n4 | $92,041 | $7,670\n5 | $106,770 | $8,897\n"
           "Parents must report changes within 14 calendar days. Providers are paid for up to 40 absences.")


def test_yes_probability_is_the_normalised_mass_of_yes_against_no():
    top = [{"token": "Yes", "logprob": math.log(0.6)}, {"token": "No", "logprob": math.log(0.2)},
           {"token": " yes", "logprob": math.log(0.1)}, {"token": "Let", "logprob": math.log(0.05)}]
    assert yes_probability(top) == pytest.approx(0.7 / 0.9)
    # "No" absent from the list: it had at most the smallest listed probability
    assert yes_probability([{"token": "Yes", "logprob": math.log(0.9)},
                            {"token": "The", "logprob": math.log(0.01)}]) == pytest.approx(0.9 / 0.91)


def test_evidence_is_the_statements_best_passages_in_context_order():
    assert best_evidence("A family of 5 may earn $106,770 a year.", CONTEXT, k=1) == ["5 | $106,770 | $8,897"]
    two = best_evidence("Parents report changes within 14 days; absences are paid.", CONTEXT, k=2)
    assert two == ["Parents must report changes within 14 calendar days.", "Providers are paid for up to 40 absences."]


def test_statements_by_code_keep_every_sentence_and_clause():
    answer = "The limit is $92,041. It applies in BCY 2026; boards may not change it. Also:\nParents pay a share."
    assert split_statements(answer) == ["The limit is $92,041.", "It applies in BCY 2026", "boards may not change it.",
                                        "Also: Parents pay a share."]  # "Also:" is too short alone


def test_cut_score_reads_the_recorded_verdicts():
    def entry(premise, ps):
        return {"output": "ProbabilityVerdicts", "reply": {"premise_sha": premise_sha(premise),
                                                             "verdicts": [{"p": p} for p in ps]}}
    assert cut_score("faithfulness", [entry("ctx", [0.9, 0.4, 0.6])], "ref") == pytest.approx(2 / 3)
    # factual correctness: answer claims against the reference (precision), reference claims against the answer
    replies = [entry("ref", [0.9, 0.2]), entry("answer", [0.7, 0.7, 0.1])]
    assert cut_score("factual_correctness", replies, "ref") == pytest.approx(2 * 1 / (2 * 1 + 1 + 1), abs=1e-6)
    assert cut_score("faithfulness", [], "ref") is None


def test_the_numeric_rule_decides_before_the_model_and_says_so():
    from rag_lab.evaluate.judge.probability import ProbabilityNLIPrompt

    class NoModel:  # a judge the rule must not reach
        llm = None

    prompt = ProbabilityNLIPrompt(evidence=2, numbers=True)
    record = prompt.verdict(NoModel(), CONTEXT, "A family of 4 may earn $115,052 a year.")
    assert record["rule"] == "numbers" and record["p"] == 0.0 and record["missing"] == ["money:115052"]
    assert "$92,041" in record["evidence"]
    with pytest.raises(TypeError, match="local llama.cpp judge"):  # numbers all stated: the model decides
        prompt.verdict(NoModel(), CONTEXT, "A family of 4 may earn $92,041 a year.")
    assert ProbabilityNLIPrompt(evidence=3, numbers=False).design != prompt.design  # options key the cache
    # "code" checks the whole context; "evidence" only the chosen passages (here the one absences sentence)
    statement = "Providers are paid for up to 40 absences in BCY 2026."
    strict = ProbabilityNLIPrompt(evidence=1, numbers="evidence").verdict(NoModel(), CONTEXT, statement)
    assert strict["rule"] == "numbers" and strict["missing"] == ["year:2026"]
    assert strict["evidence"] == "Providers are paid for up to 40 absences."
    with pytest.raises(TypeError):
        ProbabilityNLIPrompt(evidence=1, numbers="code").verdict(NoModel(), CONTEXT, statement)


def test_probability_verdict_on_the_real_model_orders_a_supported_and_a_changed_number():
    """The local 1.5B model, with the numeric rule off (the model alone decides): the supported
    statement gets a higher P(supported) than the same statement with its number changed."""
    from rag_lab.config import Settings
    from rag_lab.evaluate.judge import ConstrainedJudge, build_judge
    from rag_lab.evaluate.judge.probability import ProbabilityNLIPrompt
    from ragas.metrics._faithfulness import NLIStatementInput

    judge = ConstrainedJudge(build_judge(Settings(_env_file=None, llm_provider="local")))
    prompt = ProbabilityNLIPrompt(evidence=2, numbers=False)
    judge.transcript = []
    reply = asyncio.run(prompt.generate(judge, NLIStatementInput(context=CONTEXT, statements=[
        "A family of 4 may earn up to $92,041 a year.", "A family of 4 may earn up to $99,041 a year."])))
    supported, changed = (v.verdict for v in reply.statements)
    assert 0.0 <= changed < supported <= 1.0
    verdicts = judge.transcript[0]["reply"]["verdicts"]
    assert [v["rule"] for v in verdicts] == ["model", "model"] and judge.stats.calls == 2


def test_contrast_is_how_far_the_premise_moves_the_model():
    from rag_lab.evaluate.judge.probability import contrast

    assert contrast(0.8, 0.5) == pytest.approx(0.8)  # no belief without the premise: P(yes) as is
    assert contrast(0.62, 0.62) == pytest.approx(0.5)  # the premise does not move it
    assert contrast(0.5, 0.8) == pytest.approx(0.2)  # the premise lowers it
    # logit 0.9 − logit 0.6 = log 9 − log 1.5 = log 6: sigmoid → 6 / 7
    assert contrast(0.9, 0.6) == pytest.approx(6 / 7)
