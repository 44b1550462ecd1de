"""A second model for statement and claim splitting (``RAG_LAB_JUDGE_SPLITTER``): the split prompts of
faithfulness and factual correctness go to the splitter, every verdict to the judge."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rag_lab.config import Settings
from rag_lab.errors import ConfigError
from rag_lab.evaluate.judge import ConstrainedJudge, judge_id
from rag_lab.evaluate.judge import splitter as splitter_module
from rag_lab.evaluate.run.scorer import Scorer, to_sample
from tests.evaluate.judge_doubles import ConstrainedLLM

CONTEXT = "Family of 4 | Weekly: $1,770 | Annual: $92,041"
RECORD = {"id": "q1", "question": "What is the weekly limit for a family of 4?",
          "answer": "The weekly limit for a family of 4 is $1,770. The rule dates from 1987.",
          "reference": "The weekly limit for a family of 4 is $1,770.", "contexts": [{"text": CONTEXT}]}
SPLITTER = "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M"


class ScriptedLLM(ConstrainedLLM):
    """Splits a text into its sentences; a verdict is "supported" when the statement's last number is
    in the context (NLI) — so each request shows which model was asked what."""

    def reply(self, prompt: str, **kwargs: Any) -> str:
        props = kwargs["response_format"]["json_schema"]["schema"]["properties"]
        asked = json.loads(prompt.rsplit("input: ", 1)[1].split("\nOutput:")[0].strip())
        for field in ("statements", "claims"):
            if field in props and props[field]["items"].get("type") == "string":
                text = asked.get("answer", asked.get("response", ""))
                return json.dumps({field: [s.strip() + "." for s in text.split(".") if s.strip()]})
        context = asked["context"]
        return json.dumps({"statements": [
            {"statement": s, "reason": "compared", "verdict": int(s.rstrip(".").split()[-1] in context)}
            for s in asked["statements"]]})


class Judge(ScriptedLLM):
    name = "judge-script"


class Splitter(ScriptedLLM):
    name = "splitter-script"


def settings(splitter: str | None) -> Settings:
    return Settings(_env_file=None, judge_nli="batch", judge_splitter=splitter)  # type: ignore[call-arg]


@pytest.fixture
def scripted_splitter(monkeypatch) -> ConstrainedJudge:
    """The splitter the settings name, loaded as a constrained judge over a scripted LLM."""
    split = splitter_module.splitter_settings(settings("qwen-0.5b"))
    judge = ConstrainedJudge(Splitter(requests=[]))
    monkeypatch.setitem(splitter_module._JUDGES, (str(split.llm_model), str(split.data_dir), split.llm_threads), judge)
    return judge


def output_models(llm: ConstrainedLLM) -> list[str]:
    return [r["response_format"]["json_schema"]["name"] for r in llm.requests]


@pytest.mark.parametrize("metric, split_output", [("faithfulness", "StatementGeneratorOutput"),
                                                  ("factual_correctness", "ClaimDecompositionOutput")])
def test_the_splitter_splits_and_the_judge_verifies(scripted_splitter, metric, split_output):
    judge = Judge(requests=[])
    scorer = Scorer(settings("qwen-0.5b"), judge_llm=judge, metrics=[metric])
    scorer.judge_of(metric).transcript = transcript = []
    scores, errors = scorer.score(RECORD)
    assert errors == {}
    splitter = scripted_splitter.llm
    assert set(output_models(splitter)) == {split_output} and split_output not in output_models(judge)
    assert output_models(judge) and set(output_models(judge)) == {"NLIStatementOutput"}
    if metric == "faithfulness":  # "1987" is not in the context: one of the two statements fails
        assert scores[metric] == 0.5
        assert [t["output"] for t in transcript] == [split_output, "NLIStatementOutput"]  # the split's reply kept
    else:
        assert 0.0 < scores[metric] < 1.0  # precise, but one claim of the answer is not in the reference
    assert scripted_splitter.transcript is None  # lent to the judge's transcript for the call only


def test_splitter_scores_are_keyed_and_named_apart(scripted_splitter, monkeypatch):
    other = splitter_module.splitter_settings(settings("smollm2"))  # another splitter model: another key
    monkeypatch.setitem(splitter_module._JUDGES, (str(other.llm_model), str(other.data_dir), other.llm_threads),
                        ConstrainedJudge(Splitter(requests=[])))
    sample = to_sample(RECORD)
    keys = {s: (sc := Scorer(settings(s), judge_llm=Judge(requests=[]), metrics=["faithfulness"])).judge_key(
        sc.specs[0], sample) for s in (None, "qwen-0.5b", "smollm2")}
    assert len(set(keys.values())) == 3
    local = Settings(_env_file=None, llm_provider="local", judge_splitter="qwen-0.5b")  # type: ignore[call-arg]
    assert judge_id(local).endswith(f"+split-by:{SPLITTER}")
    assert "split-by" not in judge_id(Settings(_env_file=None, llm_provider="local"))  # type: ignore[call-arg]
    # metrics that do not split are unchanged
    recall = {s: (sc := Scorer(settings(s), judge_llm=Judge(requests=[]), metrics=["llm_context_recall"])).judge_key(
        sc.specs[0], sample) for s in (None, "qwen-0.5b")}
    assert recall[None] == recall["qwen-0.5b"]


def test_the_splitter_keeps_statements_by_sentence(scripted_splitter):
    """With ``judge_statements=by_sentence`` the splitter answers the by-sentence prompt (its grammar)."""
    local = Settings(_env_file=None, judge_nli="batch", judge_statements="by_sentence",  # type: ignore[call-arg]
                     judge_splitter="qwen-0.5b")
    scorer = Scorer(local, judge_llm=Judge(requests=[]), metrics=["faithfulness"])
    prompt = scorer._metric(scorer.specs[0]).statement_generator_prompt
    assert prompt.design == f"by-sentence-v1+split-by:{SPLITTER}"
    assert "no sentence may be left out" in prompt.instruction


def test_an_unknown_splitter_is_a_clear_error():
    with pytest.raises(ConfigError, match="Unknown local model 'qwen-7b'"):
        judge_id(Settings(_env_file=None, llm_provider="local", judge_splitter="qwen-7b"))  # type: ignore[call-arg]
