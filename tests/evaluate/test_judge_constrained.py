"""The constrained judge: every RAGAS call gets the prompt's output schema; a reply that does not
parse is retried once, then recorded with its reason (never a silent NaN)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llama_index.core.llms import CompletionResponse
from llama_index.core.llms.callbacks import llm_completion_callback

from rag_lab.config import Settings
from rag_lab.evaluate.judge import ConstrainedJudge, JudgeCallError, judge_llm_for_ragas
from rag_lab.evaluate.run.scorer import Scorer
from tests.evaluate.judge_doubles import ConstrainedLLM

RECORD = {"id": "q1", "question": "What is the weekly limit for a family of 4?",
          "answer": "The weekly limit is $1,770.", "reference": "The weekly limit for a family of 4 is $1,770.",
          "contexts": [{"text": "Family of 4: weekly income limit $1,770.", "filename": "chart.pdf"}]}


class ScriptedLLM(ConstrainedLLM):
    """Answers each call with the next scripted reply (the last one repeats); records the requests."""

    replies: list[str]

    def reply(self, prompt: str, **kwargs: Any) -> str:
        return self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]


def _scorer(llm) -> Scorer:  # RAGAS's own NLI prompt (the scripted replies are its output model)
    return Scorer(Settings(_env_file=None, judge_nli="batch"), judge_llm=llm, metrics=["faithfulness"])


def test_constrained_llms_get_the_constrained_judge_others_ragas_adapter():
    from ragas.llms.base import BaseRagasLLM

    assert isinstance(judge_llm_for_ragas(ScriptedLLM(replies=["{}"], requests=[])), ConstrainedJudge)
    from llama_index.core.llms import MockLLM

    assert isinstance(judge_llm_for_ragas(MockLLM()), BaseRagasLLM)


def test_junk_is_retried_once_then_recorded_with_its_reason():
    llm = ScriptedLLM(replies=["Sure! The statements are: the weekly limit is $1,770."], requests=[])
    scores, errors = _scorer(llm).score(RECORD)
    assert scores["faithfulness"] is None
    assert errors["faithfulness"].startswith("JudgeCallError: judge call for StatementGeneratorOutput failed 2x")
    assert "reply is not a valid StatementGeneratorOutput" in errors["faithfulness"]
    assert len(llm.requests) == 2  # the first try and one retry, then no more
    first, retry = llm.requests
    assert (first["max_tokens"], retry["max_tokens"], retry["temperature"]) == (1024, 2048, 0.3)
    assert "temperature" not in first  # the judge's own (greedy) setting
    schema = llm.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["title"] == "StatementGeneratorOutput"
    assert (schema["properties"]["statements"]["minItems"], schema["properties"]["statements"]["maxItems"]) == (1, 24)


def test_a_retry_that_parses_scores():
    statements = json.dumps({"statements": ["The weekly limit is $1,770."]})
    verdicts = json.dumps({"statements": [{"statement": "The weekly limit is $1,770.", "reason": "stated",
                                           "verdict": 1}]})
    llm = ScriptedLLM(replies=["not json", statements, verdicts], requests=[])
    scores, errors = _scorer(llm).score(RECORD)
    assert errors == {} and scores["faithfulness"] == 1.0
    # the second call asks for the statements again; the third for the NLI verdicts' schema
    assert [r["response_format"]["json_schema"]["name"] for r in llm.requests] == [
        "StatementGeneratorOutput", "StatementGeneratorOutput", "NLIStatementOutput"]


def test_failures_are_counted():
    judge = ConstrainedJudge(ScriptedLLM(replies=["[]"], requests=[]))
    from ragas.metrics._faithfulness import StatementGeneratorOutput

    for _ in range(2):
        with pytest.raises(JudgeCallError):
            judge.generate("prompt", StatementGeneratorOutput)
    assert (judge.stats.calls, judge.stats.retries, judge.stats.failures) == (4, 2, 2)
    assert judge.stats.prompt_tokens == 200 and len(judge.stats.reasons) == 2


def test_a_repeated_prompt_is_asked_once():
    from ragas.metrics._faithfulness import StatementGeneratorOutput

    llm = ScriptedLLM(replies=[json.dumps({"statements": ["a"]})], requests=[])
    judge = ConstrainedJudge(llm)
    first = judge.generate("split this", StatementGeneratorOutput)
    first.statements.append("changed by the caller")
    assert judge.generate("split this", StatementGeneratorOutput).statements == ["a"]
    assert len(llm.requests) == 1


def test_a_statement_repeated_by_the_judge_is_verified_and_counted_once():
    # seen: the 1.5B claim splitter wrote one claim 23 times; RAGAS would verify all 24 and count each
    statement, other = "A family of 3 has a monthly income of $3,411.", "The family is at 45% SMI."
    split = json.dumps({"statements": [statement] + [other] * 23})
    verdicts = json.dumps({"statements": [{"statement": statement, "reason": "stated", "verdict": 1},
                                          {"statement": other, "reason": "not stated", "verdict": 0}]})
    llm = ScriptedLLM(replies=[split, verdicts], requests=[])
    scores, errors = _scorer(llm).score(RECORD)
    assert errors == {} and scores["faithfulness"] == 0.5
    asked = json.loads(llm.requests[1]["prompt"].rsplit("input: ", 1)[1].split("\nOutput:")[0].strip())
    assert asked["statements"] == [statement, other]
    # lists of objects are the verdicts, one per statement asked: never thinned
    from ragas.metrics._faithfulness import NLIStatementOutput

    same = json.dumps({"statements": [{"statement": other, "reason": "r", "verdict": 0}] * 2})
    judge = ConstrainedJudge(ScriptedLLM(replies=[same], requests=[]))
    assert len(judge.generate("verify", NLIStatementOutput).statements) == 2


def test_an_empty_list_is_not_a_reply_ragas_turns_into_nan():
    # faithfulness returns NaN (no exception) for an empty statement list: the schema forbids it
    llm = ScriptedLLM(replies=['{"statements": []}'], requests=[])
    scores, errors = _scorer(llm).score(RECORD)
    assert scores["faithfulness"] is None and "StatementGeneratorOutput" in errors["faithfulness"]
    assert "List should have at least 1 item" in errors["faithfulness"]


class SlowJunkLLM(ScriptedLLM):
    """Takes ``seconds`` per call and replies junk (so a retry would follow); records each call."""

    seconds: float = 0.6

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        import time

        self.requests.append({"prompt": prompt, **kwargs})
        time.sleep(self.seconds)
        return CompletionResponse(text="not json", raw={})


def test_a_judge_cut_off_at_the_deadline_stops_working(monkeypatch):
    """The scorer stops waiting at the sample's deadline; the judge must stop too: no retry (with twice
    the budget) after it, holding the local model while the next sample waits."""
    import time

    llm = SlowJunkLLM(replies=[], requests=[])
    scorer = Scorer(Settings(_env_file=None, judge_deadline=0.2, judge_nli="batch"), judge_llm=llm, metrics=["faithfulness"])
    scores, errors = scorer.score(RECORD)
    assert scores["faithfulness"] is None and "judge deadline" in errors["faithfulness"]
    time.sleep(3 * llm.seconds)  # long enough for a retry to start and finish
    assert len(llm.requests) == 1  # the call that was running; no retry after the deadline


def test_the_judge_starts_no_call_after_the_deadline():
    import time

    from ragas.metrics._faithfulness import StatementGeneratorOutput

    from rag_lab.evaluate.judge.constrained import call_deadline

    llm = ScriptedLLM(replies=["not json"], requests=[])
    judge = ConstrainedJudge(llm)
    token = call_deadline.set(time.monotonic() - 1)
    try:
        with pytest.raises(JudgeCallError, match="not asked: the sample's judge deadline had passed"):
            judge.generate("prompt", StatementGeneratorOutput)
    finally:
        call_deadline.reset(token)
    assert llm.requests == []


def test_the_sample_deadline_gives_the_local_judge_minutes_per_metric_and_a_provider_300_s():
    from llama_index.core.llms import MockLLM

    from rag_lab.evaluate.run.scorer import judge_deadline

    local = ScriptedLLM(replies=[], requests=[])  # schema-constrained, like the in-process model
    metrics = ["faithfulness", "factual_correctness"]
    assert Scorer(Settings(_env_file=None), judge_llm=local, metrics=metrics).deadline == 1800.0
    assert Scorer(Settings(_env_file=None), judge_llm=MockLLM(), metrics=metrics).deadline == 300.0
    assert Scorer(Settings(_env_file=None, judge_deadline=42), judge_llm=local, metrics=metrics).deadline == 42.0
    assert judge_deadline(Settings(_env_file=None), local, 5) == 4500.0


def test_an_output_model_may_raise_the_reply_budget():
    from pydantic import BaseModel

    class Long(BaseModel):
        items: list[str]

    Long.judge_max_tokens = 1500
    llm = ScriptedLLM(replies=["cut", json.dumps({"items": ["a"]})], requests=[])
    assert ConstrainedJudge(llm).generate("list", Long).items == ["a"]
    assert [r["max_tokens"] for r in llm.requests] == [1500, 3000]  # the retry doubles it
