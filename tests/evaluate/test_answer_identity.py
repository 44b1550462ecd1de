"""The answer cache names the generator by what answers: an injected LLM by its configuration (not
only its class and model name), a configured one by provider, endpoint (when not the provider's
default) and model, spelled as the judge cache and the built LLM spell it."""

from __future__ import annotations

import httpx
import pytest

from rag_lab.config import Settings
from rag_lab.evaluate.plan.answering import CachedAnswerer, model_id
from rag_lab.models.llm import get_llm
from rag_lab.models.llm.identity import llm_identity
from tests.answer.conftest import ScriptedLLM


def _settings(**kw) -> Settings:
    return Settings(_env_file=None, **kw)


def test_injected_llms_with_one_model_name_but_other_settings_do_not_share_answers():
    settings = _settings()
    terse = ScriptedLLM(script="Yes.", model_name="gen")
    wordy = ScriptedLLM(script="Yes, as the handbook says.", model_name="gen")  # same class, same name
    assert model_id(settings, llm=terse) != model_id(settings, llm=wordy)
    keys = [CachedAnswerer("bm25", lambda: None, model_id=model_id(settings, llm=llm), inputs={}, cache=None)
            .key("What is the limit?") for llm in (terse, wordy)]
    assert keys[0] != keys[1]
    # the same configuration is the same model: its cached answers are found again
    assert model_id(settings, llm=ScriptedLLM(script="Yes.", model_name="gen")) == model_id(settings, llm=terse)


@pytest.fixture
def no_openai_env(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "RAG_LAB_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_openai_base_url_is_part_of_the_generators_name(no_openai_env):
    settings = _settings(llm_provider="openai", llm_model="gpt-4o-mini", openai_api_key="sk-test")
    assert model_id(settings) == "openai:gpt-4o-mini"  # the default endpoint: the name caches already use
    no_openai_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    assert model_id(settings) == "openai@http://127.0.0.1:8080/v1:gpt-4o-mini"


def test_bedrock_region_is_part_of_the_generators_name():
    east = _settings(llm_provider="bedrock", llm_model="amazon.nova-pro-v1:0", aws_region="us-east-1")
    west = east.model_copy(update={"aws_region": "us-west-2"})
    assert model_id(east) == "bedrock@us-east-1:amazon.nova-pro-v1:0" != model_id(west)


def _transport(request: httpx.Request) -> httpx.Response:
    return httpx.Response(500)  # never called: building the LLM sends nothing


@pytest.mark.parametrize("base_url", [None, "http://127.0.0.1:8080/v1"])
def test_configured_name_and_built_llms_identity_are_one_spelling(no_openai_env, base_url):
    if base_url:
        no_openai_env.setenv("OPENAI_BASE_URL", base_url)
    settings = _settings(llm_provider="openai", llm_model="gpt-4o-mini", openai_api_key="sk-test")
    llm = get_llm(settings, http_client=httpx.Client(transport=httpx.MockTransport(_transport)),
                  async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(_transport)))
    assert llm_identity(llm) == model_id(settings)


def test_chunk_contexts_name_their_llm_in_the_same_spelling():
    """Chunk contexts (contextual retrieval) are cached by LLM name too: two servers behind one model
    name are two models there as well, and the local model keeps its name (its indexes stay valid)."""
    from rag_lab.ingest.contextual.apply import model_id as context_model_id

    one = _settings(llm_provider="openai_compatible", llm_base_url="http://127.0.0.1:8000/v1", llm_model="qwen")
    other = one.model_copy(update={"llm_base_url": "http://127.0.0.1:9000/v1"})
    assert context_model_id(one) != context_model_id(other)  # before: both "openai_compatible:qwen"
    assert context_model_id(one) == model_id(one)
    local = _settings(llm_provider="local")
    assert context_model_id(local) == f"local:{local.llm_model_name}"


# --- the context window an openai_compatible server is told is part of the answer key ---
def _answer_key(settings: Settings) -> str:
    # a run's answerers are keyed by these inputs (its RunPlan resolves them: tests/evaluate/test_run_plan.py)
    from rag_lab.evaluate.plan.answering import answer_inputs

    inputs = answer_inputs(settings, rerank=False, params={}, index="ix")
    return CachedAnswerer("hybrid", lambda: None, model_id=model_id(settings), inputs=inputs, cache=None).key("q?")


def test_another_context_window_misses_the_answer_cache():
    from rag_lab.evaluate.ablation.answers import generator_id

    server = _settings(llm_provider="openai_compatible", llm_model="qwen", llm_base_url="http://127.0.0.1:8000/v1",
                       llm_context_window=8192)
    wider = server.model_copy(update={"llm_context_window": 32768})
    # the window decides how many chunks fit the prompt (rag_lab.answer.context): another window, another answer
    assert _answer_key(server) != _answer_key(wider)
    assert generator_id(server) != generator_id(wider)  # the ablation's answer cache too
    assert _answer_key(server) == _answer_key(server.model_copy())  # the same window: found again


def test_a_window_the_provider_does_not_read_keeps_the_key():
    # the local model's window is its runtime's n_ctx (fixed by the model name in the key), so the
    # setting changes no answer — and answers cached before the window joined the key stay valid
    local = _settings(llm_provider="local")
    assert _answer_key(local) == _answer_key(local.model_copy(update={"llm_context_window": 32768}))
    from rag_lab.evaluate.plan.answering import answer_inputs

    assert "context_window" not in answer_inputs(local, rerank=False, params={}, index="ix")
