"""The judge cache never serves a score computed from other inputs or by another judge (issue 20
point 5): faithfulness reads the question, response relevancy the embedding model, and injected
judges are told apart by what they are, not by a name the caller may not give."""

from __future__ import annotations

import json

import httpx
import pytest

from rag_lab.config import Settings
from rag_lab.evaluate.scoring import Scorer
from rag_lab.models.llm import get_llm
from rag_lab.models.llm.disk_cache import DiskCache
from tests.answer.conftest import ScriptedLLM
from tests.evaluate.test_judged_metrics import JudgeServer, _record, judge

STATEMENTS = "Given a question and an answer, analyze the complexity"  # faithfulness's first prompt
QUESTION_FROM_ANSWER = "Generate a question for the given answer"  # response relevancy's prompt


def _openai_judge(server: JudgeServer, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RAG_LAB_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings(_env_file=None, llm_provider="openai", llm_model="gpt-4o-mini", openai_api_key="sk-test-123")
    return get_llm(settings, http_client=httpx.Client(transport=httpx.MockTransport(server)),
                   async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)))


def _asked(server: JudgeServer, prefix: str) -> int:
    return sum(r["messages"][-1]["content"].startswith(prefix) for r in server.requests)


def test_faithfulness_is_rescored_when_only_the_question_changes(lab_settings, tmp_path, monkeypatch):
    server = JudgeServer()
    cache = DiskCache(tmp_path / "llm.sqlite")
    scorer = Scorer(lab_settings, judge_llm=_openai_judge(server, monkeypatch), judge_id="openai:gpt-4o-mini",
                    cache=cache, metrics=["faithfulness"])
    scorer.score(_record())
    assert _asked(server, STATEMENTS) == 1
    scorer.score(_record())
    assert _asked(server, STATEMENTS) == 1  # same inputs: cached
    # RAGAS's faithfulness puts the question into its statement prompt: another question, another score
    scorer.score({**_record(), "question": "What is the weekly income limit for a family of 4?"})
    assert _asked(server, STATEMENTS) == 2
    cache.close()


def test_response_relevancy_is_rescored_under_another_embedding_model(lab_settings, tmp_path, monkeypatch):
    server = JudgeServer()
    cache = DiskCache(tmp_path / "llm.sqlite")
    llm = _openai_judge(server, monkeypatch)
    Scorer(lab_settings, judge_llm=llm, judge_id="openai:gpt-4o-mini", cache=cache,
           metrics=["response_relevancy"]).score(_record())
    assert _asked(server, QUESTION_FROM_ANSWER) == 1
    # another embedding model name (the local provider loads the same weights; the key must still differ)
    other = lab_settings.model_copy(update={"embed_model": "sentence-transformers/paraphrase-MiniLM-L3-v2"})
    Scorer(other, judge_llm=llm, judge_id="openai:gpt-4o-mini", cache=cache,
           metrics=["response_relevancy"]).score(_record())
    assert _asked(server, QUESTION_FROM_ANSWER) == 2
    cache.close()


def _lenient(prompt: str) -> str:
    return json.dumps(judge(prompt))


def _strict(prompt: str) -> str:
    reply = judge(prompt)
    for statement in reply.get("statements", []):
        if isinstance(statement, dict):
            statement["verdict"] = 0  # supports nothing
    return json.dumps(reply)


def test_injected_judges_without_an_id_do_not_share_scores(lab_settings, tmp_path):
    cache = DiskCache(tmp_path / "llm.sqlite")
    lenient = ScriptedLLM(script=_lenient, model_name="judge")
    strict = ScriptedLLM(script=_strict, model_name="judge")  # same class, same model name
    first, _ = Scorer(lab_settings, judge_llm=lenient, cache=cache, metrics=["faithfulness"]).score(_record())
    second, _ = Scorer(lab_settings, judge_llm=strict, cache=cache, metrics=["faithfulness"]).score(_record())
    assert first["faithfulness"] == pytest.approx(0.5)
    assert second["faithfulness"] == 0.0 and strict.prompts  # asked, not served the lenient judge's 0.5
    again, _ = Scorer(lab_settings, judge_llm=ScriptedLLM(script=_lenient, model_name="judge"), cache=cache,
                      metrics=["faithfulness"]).score(_record())
    assert again["faithfulness"] == pytest.approx(0.5)  # the same judge again: its cached score
    cache.close()


def test_judge_identity_names_provider_endpoint_and_model(monkeypatch):
    from rag_lab.models.llm.identity import llm_identity

    llm = _openai_judge(JudgeServer(), monkeypatch)
    assert llm_identity(llm) == "openai@https://api.openai.com/v1/:gpt-4o-mini"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    settings = Settings(_env_file=None, llm_provider="openai", llm_model="gpt-4o-mini", openai_api_key="sk-test-123")
    assert llm_identity(get_llm(settings)) == "openai@http://127.0.0.1:8080/v1/:gpt-4o-mini"
