"""The judge cache never serves a score computed from other inputs or by another judge:
faithfulness reads the question, response relevancy the embedding model, and injected
judges are told apart by what they are, not by a name the caller may not give."""

from __future__ import annotations

import json

import httpx
import pytest

from rag_lab.config import Settings
from rag_lab.evaluate.run.scorer import Scorer
from rag_lab.models.llm import get_llm
from rag_lab.models.llm.disk_cache import DiskCache
from tests.answer.conftest import ScriptedLLM
from tests.evaluate.test_judged_metrics import JudgeServer, _record, judge

STATEMENTS = "Given a question and an answer, analyze the complexity"  # faithfulness's first prompt
QUESTION_FROM_ANSWER = "Generate a question for the given answer"  # response relevancy's prompt


def _openai_judge(server: JudgeServer, monkeypatch, **settings_kw):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RAG_LAB_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings(_env_file=None, llm_provider="openai", llm_model="gpt-4o-mini", openai_api_key="sk-test-123",
                        **settings_kw)
    return get_llm(settings, http_client=httpx.Client(transport=httpx.MockTransport(server)),
                   async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)))


def _asked(server: JudgeServer, prefix: str) -> int:
    return sum(r["messages"][-1]["content"].startswith(prefix) for r in server.requests)


def test_faithfulness_is_rescored_when_only_the_question_changes(lab_settings, tmp_path, monkeypatch):
    server = JudgeServer()
    cache = DiskCache(tmp_path / "llm.sqlite")
    scorer = Scorer(lab_settings, judge_llm=_openai_judge(server, monkeypatch),
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
    Scorer(lab_settings, judge_llm=llm, cache=cache,
           metrics=["response_relevancy"]).score(_record())
    assert _asked(server, QUESTION_FROM_ANSWER) == 1
    # another embedding model name (the local provider loads the same weights; the key must still differ)
    other = lab_settings.model_copy(update={"embed_model": "sentence-transformers/paraphrase-MiniLM-L3-v2"})
    Scorer(other, judge_llm=llm, cache=cache,
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
    assert llm_identity(llm) == "openai:gpt-4o-mini"  # the provider's default endpoint: as model_id spells it
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    settings = Settings(_env_file=None, llm_provider="openai", llm_model="gpt-4o-mini", openai_api_key="sk-test-123")
    assert llm_identity(get_llm(settings)) == "openai@http://127.0.0.1:8080/v1:gpt-4o-mini"


# -- what shapes a judge's replies besides its name ------------------------------------------------

def test_a_changed_temperature_or_token_budget_is_rescored(lab_settings, tmp_path, monkeypatch):
    server = JudgeServer()
    cache = DiskCache(tmp_path / "llm.sqlite")

    def score(**settings_kw):
        Scorer(lab_settings, judge_llm=_openai_judge(server, monkeypatch, **settings_kw), cache=cache,
               metrics=["faithfulness"]).score(_record())
        return _asked(server, STATEMENTS)

    assert score(llm_temperature=0.0, llm_max_tokens=512) == 1
    assert score(llm_temperature=0.0, llm_max_tokens=512) == 1  # the same judge: cached
    assert score(llm_temperature=0.7, llm_max_tokens=512) == 2  # another temperature: asked again
    assert score(llm_temperature=0.0, llm_max_tokens=64) == 3  # another token budget: asked again
    cache.close()


def _local_judge(**kw):
    from rag_lab.models.llm.local_llm import LocalLLM

    fields = {"model_name": "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M", "model_path": "/data/a/models/qwen.gguf",
              "temperature": 0.0, "max_tokens": 512, "context_window": 16384, "threads": 2} | kw
    return LocalLLM(**fields)  # never loaded: a cache key reads its fields only


def _faithfulness_key(scorer: Scorer) -> str:
    from rag_lab.evaluate.run.scorer import to_sample

    spec = next(s for s in scorer.specs if s.name == "faithfulness")
    return scorer.judge_key(spec, to_sample(_record()))


def test_local_judge_key_ignores_where_the_model_lies_and_its_threads(lab_settings):
    def key(**kw):
        return _faithfulness_key(Scorer(lab_settings, judge_llm=_local_judge(**kw), metrics=["faithfulness"]))

    base = key()
    assert key(model_path="/moved/data/models/qwen.gguf", threads=1) == base  # same model, same replies
    assert key(temperature=0.3) != base
    assert key(max_tokens=1024) != base
    assert key(context_window=8192) != base
    assert key(model_name="Qwen2.5-0.5B-Instruct-Q4_K_M") != base


def test_a_local_gguf_file_is_named_by_file_name_and_size_not_its_folder(tmp_path):
    from rag_lab.models.llm.identity import llm_identity

    def gguf(folder: str, size: int) -> str:
        path = tmp_path / folder / "tiny.gguf"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"G" * size)
        return str(path)

    def named(path: str, **kw) -> str:
        return llm_identity(_local_judge(model_name=path, model_path=path, **kw))

    here = named(gguf("checkout-a", 100), threads=2)
    assert named(gguf("checkout-b", 100), threads=1) == here == "local:tiny.gguf#100"  # another checkout
    assert named(gguf("checkout-c", 101)) != here  # another file behind the same name
    # a catalog alias is the catalog model (its file is verified against the catalog's sha256)
    assert llm_identity(_local_judge(model_name="qwen-1.5b")) == llm_identity(_local_judge())


def test_a_changed_constrained_judge_design_is_rescored(lab_settings, monkeypatch):
    from rag_lab.evaluate.judge import constrained

    scorer = Scorer(lab_settings, judge_llm=_local_judge(), metrics=["faithfulness"])
    base = _faithfulness_key(scorer)
    monkeypatch.setattr(constrained, "JUDGE_DESIGN", "constrained-v0")
    assert _faithfulness_key(scorer) != base
    monkeypatch.undo()
    assert _faithfulness_key(scorer) == base
    monkeypatch.setattr(constrained, "SCHEMA_RULE", "top-level arrays minItems=2")
    assert _faithfulness_key(scorer) != base
    monkeypatch.undo()
    judge = scorer._metric(scorer.specs[0]).llm  # the metric's ConstrainedJudge
    judge.max_tokens = 2048
    assert _faithfulness_key(scorer) != base
