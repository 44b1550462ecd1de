"""``openai_compatible``: the generator, the judge and the embeddings on a server of one's own
(vLLM, Ollama, llama.cpp's server …), through LlamaIndex's OpenAILike / OpenAI embedding and the real
openai SDK, over real HTTP to a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from rag_lab.config import Settings
from rag_lab.errors import ConfigError, ProviderError
from rag_lab.evaluate.plan.answering import model_id
from rag_lab.evaluate.run.runner import judge_settings
from rag_lab.models import embed_model_id, get_embed_model
from rag_lab.models.llm import get_llm
from rag_lab.models.llm.identity import llm_identity


@pytest.fixture
def server(fake_openai):
    return fake_openai(reply=lambda prompt: f"echo: {prompt[-20:]}")


def _settings(**kw) -> Settings:
    return Settings(_env_file=None, **kw)


def test_generator_on_a_server_of_ones_own(server):
    settings = _settings(llm_provider="openai_compatible", llm_base_url=server.url, llm_model="qwen2.5:7b-instruct",
                         llm_context_window=32768)
    llm = get_llm(settings)
    assert llm.metadata.context_window == 32768 and llm.metadata.model_name == "qwen2.5:7b-instruct"
    assert llm.complete("What is the annual limit?").text == "echo: is the annual limit?"
    assert [(r.path, r.model) for r in server.requests] == [("/v1/chat/completions", "qwen2.5:7b-instruct")]
    # two servers behind one model name are two models: for the answer cache and the judge cache
    assert model_id(settings) == f"openai_compatible@{server.url}:qwen2.5:7b-instruct"
    # … spelled one way by both (the built LLM's identity and the configured name)
    assert llm_identity(llm) == model_id(settings) == f"openai_compatible@{server.url}:qwen2.5:7b-instruct"


def test_judge_with_its_own_server(server):
    settings = _settings(llm_provider="local", judge_base_url=server.url)
    judge = get_llm(judge_settings(settings, "openai_compatible:llama3.1:8b"))
    assert judge.complete("Judge this.").text == "echo: Judge this."
    assert server.requests[-1].model == "llama3.1:8b"


def test_embeddings_on_a_server_of_ones_own(server):
    settings = _settings(embed_provider="openai_compatible", embed_base_url=server.url,
                         embed_model="nomic-embed-text", embed_api_key=SecretStr("sk-local"))
    vector = get_embed_model(settings).get_text_embedding("four")
    assert vector == [4.0, 1.0, 0.0, 0.0]
    assert server.requests[-1].path == "/v1/embeddings" and server.requests[-1].model == "nomic-embed-text"
    assert embed_model_id(settings) == f"openai_compatible@{server.url}:nomic-embed-text"


def test_a_refusing_server_fails_at_once_with_its_message(server):
    server.status = 401
    llm = get_llm(_settings(llm_provider="openai_compatible", llm_base_url=server.url, llm_model="m",
                            llm_api_key=SecretStr("sk-local-secret")))
    with pytest.raises(ProviderError) as err:
        llm.complete("hi")
    assert "HTTP 401" in str(err.value) and "RAG_LAB_LLM_API_KEY" in str(err.value)
    assert "sk-local-secret" not in str(err.value) and len(server.requests) == 1


def test_missing_address_or_model_is_a_clear_error():
    with pytest.raises(ConfigError, match="RAG_LAB_LLM_BASE_URL"):
        get_llm(_settings(llm_provider="openai_compatible", llm_model="m"))
    with pytest.raises(ConfigError, match="RAG_LAB_LLM_MODEL"):
        get_llm(_settings(llm_provider="openai_compatible", llm_base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(ConfigError, match="RAG_LAB_EMBED_BASE_URL"):
        get_embed_model(_settings(embed_provider="openai_compatible", embed_model="e"))
