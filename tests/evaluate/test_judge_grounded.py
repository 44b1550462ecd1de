"""Grounded NLI (``RAG_LAB_JUDGE_NLI=grounded``): RAGAS's NLI prompt with an ``evidence`` field that a
constrained judge can only fill with one of the context's passages; verdicts scored by RAGAS."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from rag_lab.config import Settings
from rag_lab.evaluate.judge import judge_id
from rag_lab.evaluate.judge.grounded import NO_EVIDENCE, GroundedNLIPrompt, grounded_output_model, passages
from rag_lab.evaluate.run.scorer import Scorer, to_sample
from tests.evaluate.judge_doubles import ConstrainedLLM

CHART = "Income limits BCY 2026\nFamily of 4 | Weekly: $1,770 | Annual: $92,041\nFamily of 5 | Weekly: $2,050"
STATEMENTS = ["The weekly limit for a family of 4 is $1,770.", "The annual limit for a family of 4 is $95,000."]
RECORD = {"id": "q1", "question": "What are the limits for a family of 4?",
          "answer": "For a family of 4 the weekly limit is $1,770 and the annual limit is $95,000.",
          "reference": "For a family of 4 the weekly limit is $1,770 and the annual limit is $92,041.",
          "contexts": [{"text": CHART, "filename": "chart.pdf"}]}


class QuotingLLM(ConstrainedLLM):
    """Splits the answer into ``STATEMENTS``; quotes the passage with the statement's family size and
    calls a statement supported when its last number is in that passage (what a careful judge does)."""

    name = "quoting-script"

    def reply(self, prompt: str, **kwargs: Any) -> str:
        schema = kwargs["response_format"]["json_schema"]["schema"]
        if "claims" in schema["properties"]:
            return json.dumps({"claims": STATEMENTS})
        if "evidence" not in json.dumps(schema):
            return json.dumps({"statements": STATEMENTS})
        asked = json.loads(prompt.rsplit("input: ", 1)[1].split("\nOutput:")[0].strip())["statements"]
        quotable = schema["$defs"]["GroundedVerdictQuoted"]["properties"]["evidence"]["enum"]
        verdicts = []
        for statement in asked:
            evidence = next((p for p in quotable if "Family of 4" in p), NO_EVIDENCE)
            number = statement.rstrip(".").split()[-1]
            verdicts.append({"statement": statement, "evidence": evidence, "reason": "compared",
                             "verdict": int(number in evidence)})
        return json.dumps({"statements": verdicts})


def grounded() -> Settings:
    return Settings(_env_file=None, judge_nli="grounded")


def test_passages_are_table_rows_and_sentences_with_the_pdf_line_breaks_undone():
    context = ("E-301: Required Parent Reporting\n"
               "• Parents are required to report, within 14 calendar days of the\n"
               "occurrence, only the following:\n"
               "➢ Changes in family income that would cause the family to exceed 85\n"
               "percent of the SMI\n"
               "\n"
               "Boards must act. They must not wait; e.g. for a family of 4 the limit is stated below.\n"
               "Family of 4 | Weekly: $1,770 | Annual: $92,041\n"
               "Family of 4 | Weekly: $1,770 | Annual: $92,041\n"
               "2) Failure to report may result in fact-finding.")
    assert passages(context) == [
        "E-301: Required Parent Reporting",
        "• Parents are required to report, within 14 calendar days of the occurrence, only the following:",
        "➢ Changes in family income that would cause the family to exceed 85 percent of the SMI",
        "Boards must act.", "They must not wait; e.g. for a family of 4 the limit is stated below.",  # no cut before lower case
        "Family of 4 | Weekly: $1,770 | Annual: $92,041",  # a table row whole, once
        "2) Failure to report may result in fact-finding."]
    assert passages("  a   b  \n\n") == ["a b"] and passages("") == []
    # a table laid out as text (no " | ", no sentence ends) is quoted line by line, not as one passage
    table = "FAMILY SIZE 2:\n" + "\n".join(f"Monthly PSoC - {n} Child " + " ".join(f"${n * k}" for k in range(40))
                                          for n in range(1, 4))
    assert passages(table) == table.splitlines()
    assert passages("x" * 500) == ["x" * 400]  # a long line is quoted by its first 400 characters


def test_the_output_model_takes_only_the_contexts_passages_and_one_verdict_per_statement():
    model = grounded_output_model(CHART, ["s", "t"])
    row = {"statement": "s", "evidence": "Family of 5 | Weekly: $2,050", "reason": "r", "verdict": 0}
    assert len(model.model_validate({"statements": [row, row | {"evidence": NO_EVIDENCE}]}).statements) == 2
    with pytest.raises(ValidationError):  # a quote the context does not hold
        model.model_validate({"statements": [row, row | {"evidence": "Family of 4 | Weekly: $1,950"}]})
    with pytest.raises(ValidationError):  # one verdict short
        model.model_validate({"statements": [row]})
    with pytest.raises(ValidationError):  # a statement it was not asked about
        model.model_validate({"statements": [row, row | {"statement": "u"}]})
    with pytest.raises(ValidationError):  # a run-on reason
        model.model_validate({"statements": [row, row | {"reason": "r" * 301}]})
    assert model.judge_max_tokens == 500  # the reply's budget grows with the statements


def test_the_judge_quotes_from_an_enum_of_the_context_and_ragas_scores_the_verdicts():
    llm = QuotingLLM(requests=[])
    scorer = Scorer(grounded(), judge_llm=llm, metrics=["faithfulness"])
    scorer.judge_of("faithfulness").transcript = transcript = []
    scores, errors = scorer.score(RECORD)
    assert errors == {} and scores["faithfulness"] == 0.5  # the changed annual limit is caught
    # the judge's replies are kept when asked (benchmarks/judge_validation.py records them)
    assert [t["output"] for t in transcript] == ["StatementGeneratorOutput", "GroundedNLIOutput"]
    assert [v["evidence"] for v in transcript[1]["reply"]["statements"]] == [
        "Family of 4 | Weekly: $1,770 | Annual: $92,041"] * 2
    nli = [r for r in llm.requests if "evidence" in json.dumps(r["response_format"])]
    assert len(nli) == 1
    schema = nli[0]["response_format"]["json_schema"]["schema"]
    verdicts = schema["properties"]["statements"]
    assert (verdicts["minItems"], verdicts["maxItems"]) == (2, 2)
    quoted = schema["$defs"]["GroundedVerdictQuoted"]["properties"]
    assert quoted["statement"]["enum"] == STATEMENTS and quoted["reason"]["maxLength"] == 300
    assert nli[0]["max_tokens"] == 1024  # two statements: the judge's own budget (more statements, more)
    assert quoted["evidence"]["enum"] == [
        "Income limits BCY 2026", "Family of 4 | Weekly: $1,770 | Annual: $92,041", "Family of 5 | Weekly: $2,050",
        NO_EVIDENCE]
    prompt = nli[0]["prompt"]
    assert "first copy into evidence" in prompt and "Adults: $12" in prompt  # instruction and worked examples
    assert prompt.count("Family of 5 | Weekly: $2,050") == 1  # the enum is in the grammar, not repeated in the prompt


def test_factual_correctness_verifies_its_claims_the_same_way():
    llm = QuotingLLM(requests=[])
    scores, errors = Scorer(grounded(), judge_llm=llm, metrics=["factual_correctness"]).score(RECORD)
    assert errors == {} and scores["factual_correctness"] is not None
    assert any("evidence" in json.dumps(r["response_format"]) for r in llm.requests)


def test_grounded_scores_are_keyed_and_named_apart():
    sample = to_sample(RECORD)
    keys = {nli: Scorer(Settings(_env_file=None, judge_nli=nli), judge_llm=QuotingLLM(requests=[]),
                        metrics=["faithfulness"]) for nli in ("batch", "per_statement", "grounded")}
    assert len({scorer.judge_key(scorer.specs[0], sample) for scorer in keys.values()}) == 3
    assert judge_id(grounded()).endswith(f"+{GroundedNLIPrompt.design}") and "+grounded-v" in judge_id(grounded())


def test_auto_gives_the_constrained_judge_probability_verdicts_and_leaves_provider_judges_to_ragas():
    from llama_index.core.llms import MockLLM
    from ragas.metrics._faithfulness import NLIStatementPrompt

    from rag_lab.evaluate.judge.grounded import GroundedNLIPrompt
    from rag_lab.evaluate.judge.per_statement import NLI_PROMPT_FIELDS

    default = Settings(_env_file=None)
    assert default.judge_nli == "auto"
    local = Scorer(default, judge_llm=QuotingLLM(requests=[]), metrics=["faithfulness", "factual_correctness"])
    provider = Scorer(default, judge_llm=MockLLM(), metrics=["faithfulness", "factual_correctness"])
    def nli_prompts(scorer):  # the metrics' NLI prompts, where RAGAS keeps them
        metrics = [scorer._metric(spec) for spec in scorer.specs]
        return [getattr(m, NLI_PROMPT_FIELDS[type(m).__name__]) for m in metrics]

    from rag_lab.evaluate.judge import versions
    from rag_lab.evaluate.judge.code_split import CodeClaimPrompt, CodeStatementPrompt
    from rag_lab.evaluate.judge.probability import ProbabilityNLIPrompt

    # the local judge's default is probability verdicts on statements split by code
    assert [type(p) for p in nli_prompts(local)] == [ProbabilityNLIPrompt] * 2
    metrics = [local._metric(spec) for spec in local.specs]
    assert type(metrics[0].statement_generator_prompt) is CodeStatementPrompt
    assert type(metrics[1].claim_decomposition_prompt) is CodeClaimPrompt
    assert [type(p) for p in nli_prompts(provider)] == [NLIStatementPrompt] * 2
    assert judge_id(Settings(_env_file=None, llm_provider="local")).endswith(
        f"+{ProbabilityNLIPrompt.version}-e3-ncode-neg-names-verb-cells-all-ctx-r{versions.digest()}+{CodeStatementPrompt.design}")
    # context recall and precision follow faithfulness onto probability verdicts (RAG_LAB_JUDGE_CONTEXT=auto)
    from rag_lab.evaluate.judge.probability_context import (ContextPrecisionProbabilityPrompt,
                                                            ContextRecallProbabilityPrompt)

    def context_prompts(settings, llm):
        scorer = Scorer(settings, judge_llm=llm, metrics=["llm_context_recall", "llm_context_precision_with_reference"])
        found = {spec.name: scorer._metric(spec) for spec in scorer.specs}
        return (type(found["llm_context_recall"].context_recall_prompt),
                type(found["llm_context_precision_with_reference"].context_precision_prompt))

    assert context_prompts(default, QuotingLLM(requests=[])) == (ContextRecallProbabilityPrompt,
                                                                 ContextPrecisionProbabilityPrompt)
    assert ContextRecallProbabilityPrompt not in context_prompts(default, MockLLM())
    assert ContextRecallProbabilityPrompt not in context_prompts(Settings(_env_file=None, judge_context="ragas"),
                                                                 QuotingLLM(requests=[]))
    assert "-ctx" not in judge_id(Settings(_env_file=None, llm_provider="local", judge_context="ragas"))
    grounded_local = Settings(_env_file=None, llm_provider="local", judge_nli="grounded")
    assert judge_id(grounded_local).endswith(f"+{GroundedNLIPrompt.design}")  # grounded keeps RAGAS's splitter
    assert "+" not in judge_id(Settings(_env_file=None, llm_provider="openai", llm_model="gpt-4o-mini"))


def test_a_new_grounded_prompt_version_is_rescored(monkeypatch):
    scorer = Scorer(grounded(), judge_llm=QuotingLLM(requests=[]), metrics=["faithfulness"])
    sample = to_sample(RECORD)
    before = scorer.judge_key(scorer.specs[0], sample)
    monkeypatch.setattr(GroundedNLIPrompt, "design", "grounded-v0")
    assert scorer.judge_key(scorer.specs[0], sample) != before
    assert judge_id(grounded()).endswith("+grounded-v0")
    monkeypatch.undo()
    assert scorer.judge_key(scorer.specs[0], sample) == before
    # an edited instruction misses too, version bumped or not
    monkeypatch.setattr(GroundedNLIPrompt, "instruction", GroundedNLIPrompt.instruction + " Be strict.")
    assert scorer.judge_key(scorer.specs[0], sample) != before
