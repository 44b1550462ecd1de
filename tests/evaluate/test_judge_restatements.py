"""No false alarms on true restatements, through the scoring path (``Scorer.score``: statements by
code, then the rules, then the model's P(yes)). The model is a double answering P(yes) = 0.9 for
everything: a true restatement scores 0.9 (no rule killed it), the same answer with a real error
still scores 0 (the rule still catches it). The real 1.5B model on the cases it must read itself:
test_judge_local_real.py."""

from __future__ import annotations

import math

import pytest

from rag_lab.evaluate.run.scorer import Scorer
from tests.evaluate.judge_doubles import VerdictLLM

P = 0.9
TABLE = ("Income eligibility limits, BCY 2026\nFamily Size | Bi-weekly | Monthly | Annual\n"
         "4 | $3,410 | $7,389 | $88,668\n5 | $3,972 | $8,606 | $103,272\n")


@pytest.fixture(scope="module")
def scorer(tmp_path_factory):
    from rag_lab.config import load_settings

    settings = load_settings(data_dir=tmp_path_factory.mktemp("restatements")).model_copy(
        update={"llm_provider": "local"})
    return Scorer(settings, judge_llm=VerdictLLM(p=P), metrics=["faithfulness", "factual_correctness"])


def score(scorer, answer, context, reference=None, question="What does the document say?"):
    scores, errors = scorer.score({"id": "q", "question": question, "answer": answer,
                                   "reference": reference or context, "contexts": [{"text": context}]})
    return scores, errors


def _cases(*cases):
    return [case if len(case) == 3 else (*case, None) for case in cases]


@pytest.mark.parametrize(("answer", "context", "reference"), _cases(
    # numbers in words, either side
    ("Children may have up to forty unexplained absences.", "Children may have up to 40 unexplained absences."),
    ("Children may have up to 40 unexplained absences.", "Children may have up to forty unexplained absences."),
    ("A family of five may earn up to $3,972 bi-weekly.", TABLE, "A family of 5 may earn up to $3,972 bi-weekly."),
    ("Providers are paid for twenty-four hours of care.", "Providers are paid for 24 hours of care."),
    # intervals: the "two" of "every two weeks" is no count the context must state
    ("A family of 5 may earn up to $3,972 every two weeks.", TABLE, "A family of 5 may earn up to $3,972 bi-weekly."),
    ("A family of 5 may earn up to $3,972 every other week.", TABLE, "A family of 5 may earn up to $3,972 bi-weekly."),
    ("Parents report income every 2 weeks.", "Parents report income bi-weekly."),
    ("A family of 4 may earn up to $7,389 per month.", TABLE, "A family of 4 may earn up to $7,389 monthly."),
    # dates in any common form, ISO included
    ("The new rates take effect on October 1, 2025.", "Effective date: 2025-10-01."),
    ("The new rates take effect on 2025-10-01.", "The new rates take effect on October 1, 2025."),
    ("The new rates take effect on 1 October 2025.", "Effective 10/01/2025."),
    ("The new rates take effect on Oct. 1st, 2025.", "Effective date: 2025-10-01."),
    # percent and fraction
    ("Families pay 50 percent of the cost of care.", "Families pay one half of the cost of care."),
    ("About 33% of providers took part.", "One third of providers took part."),
    ("Boards may spend 75% on direct care.", "Boards may spend 3/4 of the grant on direct care."),
    # scale words
    ("The board awarded $1.2 million in grants.", "The board awarded $1,200,000 in grants."),
    ("The board awarded 1.2 million dollars in grants.", "The board awarded $1,200,000 in grants."),
    ("The grant was $12K per site.", "Each site received a grant of $12,000."),
    # a negated paraphrase of a word that says "no"
    ("Children under 12 do not pay.", "Admission | Adults: $12\nChildren under 12 attend free of charge."),
    ("Parents who work do not need to meet the education requirement.",
     "Parents who work are exempt from the education requirement."),
    # citation markers are no claims ("[Doc 2]" is not a count of 2)
    ("A family of 5 may earn up to $3,972 bi-weekly [Doc 3].", TABLE, "A family of 5 may earn up to $3,972 bi-weekly."),
))
def test_a_true_restatement_is_left_to_the_model(scorer, answer, context, reference):
    """Faithfulness against the context; factual correctness against the reference (the context,
    where it is a sentence)."""
    scores, errors = score(scorer, answer, context, reference)
    assert errors == {}
    assert scores["faithfulness"] == pytest.approx(P) and scores["faithfulness"] >= 0.5
    assert scores["factual_correctness"] >= 0.5


@pytest.mark.parametrize(("answer", "context"), [
    ("A family of 5 may earn up to $4,972 every two weeks.", TABLE),  # wrong amount
    ("Children may have up to fifty unexplained absences.", "Children may have up to 40 unexplained absences."),
    ("The new rates take effect on October 2, 2025.", "Effective date: 2025-10-01."),
    ("The new rates take effect on 2026-10-01.", "The new rates take effect on October 1, 2025."),
    ("Families pay 40 percent of the cost of care.", "Families pay one half of the cost of care."),
    ("The board awarded $1.5 million in grants.", "The board awarded $1,200,000 in grants."),
    ("Parents report income every 3 weeks.", "Parents report income bi-weekly."),
    ("Adults do not pay.", "Admission | Adults: $12\nChildren under 12 attend free of charge."),
    ("Providers are not required to renew the permit.", "Providers must renew the permit every year."),
])
def test_the_same_answers_with_a_real_error_are_still_caught(scorer, answer, context):
    scores, errors = score(scorer, answer, context)
    assert errors == {} and scores["faithfulness"] == 0.0


def test_a_refusal_has_no_claims_so_faithfulness_does_not_apply(scorer):
    """NaN with its reason, never 0; its factual correctness is below 0.5: it states
    none of the reference's facts."""
    VerdictLLM.asked.clear()
    scores, errors = score(scorer, "I couldn't find information about that", TABLE,
                           reference="A family of 5 may earn up to $3,972 bi-weekly.")
    assert scores["faithfulness"] is None and not math.isnan(scores["factual_correctness"])
    assert errors["faithfulness"].startswith("NotApplicable: faithfulness does not apply")
    assert "refusal" in errors["faithfulness"] and "factual_correctness" not in errors
    assert scores["factual_correctness"] < 0.5
    from rag_lab.evaluate.plan.rescore import is_transient

    assert not is_transient(errors["faithfulness"])  # a resume does not ask again


def test_a_hedged_answer_is_judged_on_what_it_claims(scorer):
    scores, errors = score(scorer, "I couldn't find the annual limit, but the bi-weekly limit for a family of 5 "
                                   "is $3,972.", TABLE)
    assert errors == {} and scores["faithfulness"] == pytest.approx(P)  # the refusal clause is no statement


def test_a_terse_answer_need_not_repeat_the_questions_terms(scorer):
    """Factual correctness reads each text as an answer to the question: "$3,972 [Doc 1]" answers
    "the bi-weekly limit for a family of 5 in BCY 2026"; its wrong twin is still 0."""
    question = "What is the bi-weekly income limit for a family of 5 in BCY 2026?"
    reference = "In BCY 2026 a family of 5 may earn up to $3,972 bi-weekly."
    right, errors = score(scorer, "$3,972 [Doc 1]", TABLE, reference=reference, question=question)
    assert errors == {} and right["factual_correctness"] == pytest.approx(P)
    wrong, _ = score(scorer, "$8,606 [Doc 1]", TABLE, reference=reference, question=question)
    assert wrong["factual_correctness"] < 0.5 < right["factual_correctness"]
    other_family, _ = score(scorer, "For a family of 4 it is $3,410.", TABLE, reference=reference, question=question)
    assert other_family["factual_correctness"] == 0.0


def test_a_quoted_evidence_line_is_stated_without_asking_the_model(scorer):
    """An evidence-first answer quotes its lines: a word-for-word copy of the context (a PDF line break
    is a space, quotation marks and the citation are no part of it) is stated, p = 1, no model call;
    the answer's own sentence is still the model's."""
    context = ("Parents may report changes at any time.\nA family of 5 may earn up to $3,972 bi-weekly and keep\n"
               "its eligibility for the whole 12-month period.")
    quoted = ("“A family of 5 may earn up to $3,972 bi-weekly and keep its eligibility for the whole 12-month "
              "period.” [Doc 1: bcy-26.pdf, Page 1, line 2]")
    VerdictLLM.asked.clear()
    scores, errors = score(scorer, quoted, context)
    assert errors == {} and scores["faithfulness"] == 1.0
    assert not [prompt for prompt in VerdictLLM.asked if "Statement: “A family of 5" in prompt]
    both, _ = score(scorer, "The limit is $3,972 bi-weekly.\n" + quoted, context)
    assert both["faithfulness"] == pytest.approx(P * 1.0)  # P(both stated): the copy does not dilute the model's P


@pytest.mark.parametrize("answer", [
    "“A family of 5 may earn up to $4,972 bi-weekly and keep its eligibility.” [Doc 1]",  # one figure changed
    "“earn up to $3,972 bi-weekly” [Doc 1]",  # a fragment too short to stand for a copy
])
def test_a_changed_or_short_copy_is_not_decided_by_the_copy_rule(scorer, answer):
    context = "A family of 5 may earn up to $3,972 bi-weekly and keep its eligibility."
    scores, errors = score(scorer, answer, context)
    assert errors == {} and scores["faithfulness"] in (0.0, pytest.approx(P))


def test_faithfulness_all_is_the_probability_that_every_statement_is_stated(tmp_path):
    """"share" (RAGAS's ratio): the mean verdict; "all": their product — a quoted line (p = 1) does
    not dilute the answer's one unstated claim."""
    from rag_lab.config import load_settings

    settings = load_settings(data_dir=tmp_path).model_copy(update={"llm_provider": "local"})
    context = "Parents may report changes at any time.\nA family of 5 may earn up to $3,972 bi-weekly and keep its eligibility."
    quoted = "“A family of 5 may earn up to $3,972 bi-weekly and keep its eligibility.” [Doc 1]"
    scores = {}
    for rule in ("share", "all"):
        scorer = Scorer(settings.model_copy(update={"judge_faithfulness_score": rule}), judge_llm=VerdictLLM(p=P),
                        metrics=["faithfulness"])
        for name, answer in {"paraphrase": f"The limit is $3,972 bi-weekly.\n{quoted}",
                             "invented": f"The limit is $4,500 bi-weekly.\n{quoted}"}.items():
            found, errors = score(scorer, answer, context)
            assert errors == {}
            scores[rule, name] = found["faithfulness"]
    assert scores["share", "paraphrase"] == pytest.approx((P + 1) / 2) and scores["all", "paraphrase"] == pytest.approx(P)
    assert scores["share", "invented"] == pytest.approx(0.5) and scores["all", "invented"] == 0.0


def test_the_pieces_of_a_long_quotation_are_copies_however_short():
    """The splitter cuts a quoted line at its sentences: the piece that opens or closes the quotation
    is still the answer copying (a whole short quotation is not: above)."""
    from rag_lab.evaluate.judge.verbatim import copied_from

    context = "Call the help desk first. Contact support at 1-888-265-6461 if the page does not load."
    assert copied_from("Contact support at 1-888-265-6461 if the page”", context)
    assert copied_from("“Call the help desk first.", context)
    assert not copied_from("“Contact support”", context)  # opened and closed: a whole short quotation
    assert not copied_from("Contact the board”", context)  # not in the context


def test_a_widening_not_is_no_negation():
    from rag_lab.evaluate.judge.rules import negation_mismatch

    evidence = "Stakeholders may comment on all aspects of the system, including rates and eligibility."
    assert not negation_mismatch("Stakeholders may comment on all aspects, including, but not limited to, rates.",
                                 evidence)
    assert not negation_mismatch("Stakeholders may comment not only on rates but also on eligibility.", evidence)
    assert negation_mismatch("Stakeholders may not comment on rates.", evidence)


def test_factual_correctness_verifies_one_direction_then_the_other_each_against_one_premise(tmp_path):
    """With ``judge_claims_evidence = "whole"`` every claim of a direction reads the same premise (the
    other text, whole), and the answer's claims are all asked before the reference's: consecutive calls
    share their prefix, which llama.cpp's prompt cache computes once."""
    from rag_lab.config import load_settings

    settings = load_settings(data_dir=tmp_path).model_copy(update={"llm_provider": "local", "judge_claims_evidence": "whole"})
    whole = Scorer(settings, judge_llm=VerdictLLM(p=P), metrics=["factual_correctness"])
    answer = ("The limit is $3,972 bi-weekly for a family of 5. Parents report changes within 14 days. "
              "Providers are paid for absences. The program year is BCY 2026.")
    reference = "A family of 5 may earn up to $3,972 bi-weekly. Changes are reported within 14 days."
    VerdictLLM.asked.clear()
    scores, errors = whole.score({"id": "q", "question": "What are the rules?", "answer": answer, "reference": reference,
                                  "contexts": [{"text": reference}]})
    assert errors == {} and scores["factual_correctness"] > 0
    premises = [prompt.rsplit("Premise: ", 1)[1].split("\nStatement: ")[0] for prompt in VerdictLLM.asked]
    assert premises == sorted(premises, key=lambda p: p.endswith(answer))  # the answer's claims first
    assert len(set(premises)) == 2 and any(p.endswith("Answer: " + reference) for p in premises)


def test_a_contrastive_verdict_asks_the_statement_without_a_premise_too(tmp_path):
    """``judge_contrastive = "no-premise"``: each model verdict is P(yes) against P(yes) of the statement
    alone; a model that says the same either way (this double) scores 0.5, however sure it is."""
    from rag_lab.config import load_settings
    from rag_lab.evaluate.judge.probability import NO_PREMISE

    settings = load_settings(data_dir=tmp_path).model_copy(update={"llm_provider": "local", "judge_contrastive": "no-premise"})
    contrastive = Scorer(settings, judge_llm=VerdictLLM(p=P), metrics=["faithfulness"])
    VerdictLLM.asked.clear()
    scores, errors = contrastive.score({"id": "q", "question": "?", "answer": "Parents report income bi-weekly.",
                                        "reference": "r", "contexts": [{"text": "Parents report income bi-weekly."}]})
    assert errors == {} and scores["faithfulness"] == pytest.approx(0.5)
    assert [prompt.endswith(f"Premise: {NO_PREMISE}\nStatement: Parents report income bi-weekly.\nAnswer:")
            for prompt in VerdictLLM.asked] == [False, True]


@pytest.mark.parametrize("lever", [{"judge_verbatim": "off"}, {"judge_claims_evidence": "whole"},
                                   {"judge_contrastive": "no-premise"}, {"judge_cells": "off"},
                                   {"judge_faithfulness_score": "share"}])
def test_each_verdict_lever_is_another_judge_in_the_cache_key(lever):
    """A judged score made with one setting of a lever is never served for another: the judge id (in
    manifests and in the judged scores' key) and the verdict prompt's design change with each."""
    from rag_lab.config import Settings
    from rag_lab.evaluate.judge import judge_id
    from rag_lab.evaluate.judge.probability import ProbabilityNLIPrompt

    base = Settings(_env_file=None, llm_provider="local")
    assert judge_id(base.model_copy(update=lever)) != judge_id(base)
    options = {"judge_verbatim": {"verbatim": False}, "judge_claims_evidence": {"claims_evidence": "whole"},
               "judge_contrastive": {"contrastive": True}, "judge_cells": {"cells": False},
               "judge_faithfulness_score": {"faithfulness_score": "all"}}[next(iter(lever))]
    default = ProbabilityNLIPrompt(verbatim=True, cells=True)
    assert ProbabilityNLIPrompt(**({"verbatim": True, "cells": True} | options)).design != default.design


def test_an_answer_that_only_copies_context_lines_is_faithful_but_not_correct(scorer):
    """The copy rule's degenerate case: an answer dumping context lines that do not answer the question
    is faithful by the copy rule (every line is stated), and factual correctness ranks it below the
    right answer (the reference's figure is missing: its recall claim is 0; whether the dump's own
    claims match the reference is the model's call, here a double saying yes to all)."""
    context = ("Parents may report changes at any time through the online portal.\n"
               "Providers must post their hours of operation where parents can see them.\n"
               "A family of 5 may earn up to $3,972 bi-weekly.")
    dump = ("“Parents may report changes at any time through the online portal.” [Doc 1]\n"
            "“Providers must post their hours of operation where parents can see them.” [Doc 1]")
    scores, errors = score(scorer, dump, context, reference="A family of 5 may earn up to $3,972 bi-weekly.",
                           question="What is the bi-weekly income limit for a family of 5?")
    assert errors == {} and scores["faithfulness"] == 1.0
    right, _ = score(scorer, "A family of 5 may earn up to $3,972 bi-weekly.", context,
                     reference="A family of 5 may earn up to $3,972 bi-weekly.",
                     question="What is the bi-weekly income limit for a family of 5?")
    assert scores["factual_correctness"] < right["factual_correctness"] - 0.1
