"""What each LLM provider is (its class, key variable, default model, endpoint, price, identity),
pinned; and a provider added as one table row plus its class is what the factory, the identity
and the prices use."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_lab.config import load_settings
from rag_lab.errors import ConfigError
from rag_lab.models.llm.factory import configured_context_window, get_llm, resolve_model
from rag_lab.models.llm.identity import configured_endpoint, configured_name, llm_name
from rag_lab.models.pricing import price_for


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in ("OPENAI_API_KEY", "GROQ_API_KEY", "OPENAI_BASE_URL", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env


@pytest.mark.parametrize("provider, model, agent_model", [
    ("local", "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M", "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M"),
    ("openai", "gpt-5-mini", "gpt-5-nano"),
    ("groq", "llama-3.3-70b-versatile", "llama-3.3-70b-versatile"),
    ("bedrock", "amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"),
])
def test_default_models(clean_env, provider, model, agent_model):
    settings = load_settings(llm_provider=provider)
    assert settings.llm_model_name == resolve_model(settings) == model
    assert resolve_model(settings, for_agent=True) == agent_model


def test_openai_compatible_needs_a_model_name_and_takes_its_window_from_settings(clean_env):
    settings = load_settings(llm_provider="openai_compatible", llm_context_window=4096)
    with pytest.raises(ConfigError, match="The openai_compatible LLM provider needs a model name") as caught:
        settings.llm_model_name
    assert caught.value.hint == "set RAG_LAB_LLM_MODEL to the model as the server names it"
    assert configured_context_window(settings) == 4096
    assert configured_context_window(load_settings(llm_provider="openai", llm_context_window=4096)) is None


def test_an_unknown_provider_is_refused_with_every_known_one(clean_env):
    with pytest.raises(ConfigError, match=r"RAG_LAB_LLM_PROVIDER: Input should be 'local', 'openai', 'groq', "
                                          r"'bedrock' or 'openai_compatible' \(got 'nope'\)"):
        load_settings(llm_provider="nope")
    settings = load_settings().model_copy(update={"llm_provider": "nope", "llm_model": "x"})
    with pytest.raises(ConfigError, match="Unknown LLM provider 'nope'") as caught:
        get_llm(settings)
    assert caught.value.hint == "set RAG_LAB_LLM_PROVIDER to local, openai, groq, bedrock or openai_compatible"

    from rag_lab.evaluate.run.runner import parse_judge

    assert parse_judge("bedrock:amazon.nova-pro-v1:0") == ("bedrock", "amazon.nova-pro-v1:0")
    with pytest.raises(ConfigError, match="Unknown judge provider 'nope' in --judge 'nope:x'") as caught:
        parse_judge("nope:x")
    assert caught.value.hint == "use PROVIDER[:MODEL] with PROVIDER one of local, openai, groq, bedrock, openai_compatible"


@pytest.mark.parametrize("provider, key_env", [("openai", "OPENAI_API_KEY"), ("groq", "GROQ_API_KEY")])
def test_a_missing_key_names_its_variable(clean_env, provider, key_env):
    with pytest.raises(ConfigError, match=f"The {provider} LLM provider needs an API key") as caught:
        get_llm(load_settings(llm_provider=provider))
    assert caught.value.hint == f"set {key_env} (in the environment or .env)"


def test_bedrock_without_a_region_says_so(clean_env):
    with pytest.raises(ConfigError, match="The bedrock LLM provider needs an AWS region"):
        get_llm(load_settings(llm_provider="bedrock"))


def test_endpoints_and_names(clean_env, monkeypatch):
    assert configured_endpoint(load_settings(llm_provider="local")) is None
    assert configured_endpoint(load_settings(llm_provider="groq")) is None
    assert configured_endpoint(load_settings(llm_provider="openai")) is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert configured_name(load_settings(llm_provider="openai"), "gpt-4o") == "openai@http://127.0.0.1:9/v1:gpt-4o"
    assert configured_endpoint(load_settings(llm_provider="bedrock", aws_region="eu-west-1")) == "eu-west-1"
    compatible = load_settings(llm_provider="openai_compatible", llm_base_url="http://h:8000/v1", llm_model="m")
    assert configured_name(compatible, "m") == "openai_compatible@http://h:8000/v1:m"
    # each SDK's own default endpoint is not part of the name
    assert llm_name("openai", "gpt-4o", "https://api.openai.com/v1/") == "openai:gpt-4o"
    assert llm_name("groq", "llama-3.1-8b-instant", "https://api.groq.com/openai/v1") == "groq:llama-3.1-8b-instant"
    assert llm_name("bedrock", "amazon.nova-lite-v1:0", "us-east-1") == "bedrock@us-east-1:amazon.nova-lite-v1:0"


def test_prices():
    assert price_for("local", "anything") == price_for("local", "x") and price_for("local", "x").cost(10**6, 10**6) == 0
    assert (price_for("openai", "gpt-5-mini").input_per_mtok, price_for("openai", "gpt-5-mini").output_per_mtok) == (0.25, 2.0)
    assert price_for("groq", "llama-3.3-70b-versatile").cost(10**6, 10**6) == pytest.approx(0.59 + 0.79)
    assert price_for("bedrock", "us.amazon.nova-micro-v1:0") == price_for("bedrock", "amazon.nova-micro-v1:0")
    assert price_for("openai", "us.gpt-5") is None  # cross-region prefixes are Bedrock's only
    assert price_for("openai_compatible", "gpt-5") is None
    assert price_for("openai", "no-such-model") is None


class _ToyTransport:
    """What a test hands the factory as the toy's transport."""


def build_toy(settings, model, *, http_client=None):
    from rag_lab.config import llm_api_key

    key = llm_api_key(settings, "toy")
    """The toy provider's module function: a LlamaIndex LLM carrying its ErrorGuard, as every provider's does."""
    from typing import Any

    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata

    from rag_lab.config import LLM_PROVIDERS
    from rag_lab.models.llm._guard import ErrorGuard
    from rag_lab.models.llm.identity import configured_endpoint

    class ToyLLM(CustomLLM):
        model_name: str
        transport: Any = None
        _guard: ErrorGuard = PrivateAttr()

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name=self.model_name)

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
            return CompletionResponse(text="toy")

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
            raise NotImplementedError

    llm = ToyLLM(model_name=model, transport=http_client)
    endpoint = configured_endpoint(settings) or LLM_PROVIDERS["toy"].default_endpoint
    llm._guard = ErrorGuard(LLM_PROVIDERS["toy"].label, model, 1, lambda exc, guard: None, (key,), endpoint=endpoint)
    return llm


@pytest.fixture
def toy_provider(monkeypatch):
    """The toy provider's module and its one row."""
    import sys
    import types
    from types import MappingProxyType

    from rag_lab.config import LLM_PROVIDERS, LLMProviderSpec

    module = types.ModuleType("toy_llm")
    module.build_toy = build_toy
    monkeypatch.setitem(sys.modules, "toy_llm", module)
    monkeypatch.setitem(LLM_PROVIDERS, "toy", LLMProviderSpec(
        "toy", "Toy", "toy_llm:build_toy", default_model="toy-1", agent_model="toy-mini",
        key_env="TOY_API_KEY", key_required=True, default_endpoint="https://toy.example/v1",
        endpoint_setting="llm_base_url",
        prices=MappingProxyType({"toy-1": (1.0, 2.0)})))


def test_a_provider_is_one_row_and_its_module(clean_env, toy_provider, monkeypatch):
    from rag_lab.evaluate.plan.cost import cost_usd
    from rag_lab.evaluate.run.runner import parse_judge
    from rag_lab.models.llm.identity import llm_identity

    settings = load_settings(llm_provider="toy")
    assert settings.llm_model_name == "toy-1" and resolve_model(settings, for_agent=True) == "toy-mini"
    with pytest.raises(ConfigError, match="The toy LLM provider needs an API key") as caught:
        get_llm(settings)
    assert caught.value.hint == "set TOY_API_KEY (in the environment or .env)"
    (Path.cwd() / ".env").write_text("TOY_API_KEY=from-dotenv\n")  # read as the settings read theirs
    assert get_llm(settings)._guard.secrets[0].get_secret_value() == "from-dotenv"
    monkeypatch.setenv("TOY_API_KEY", "toy-secret")
    transport = _ToyTransport()
    llm = get_llm(settings, http_client=transport, bedrock_client=object())  # given only what it takes
    assert type(llm).__name__ == "ToyLLM" and llm.transport is transport and llm.complete("hi").text == "toy"
    assert llm_identity(llm) == configured_name(settings, "toy-1") == "toy:toy-1"  # its default endpoint: not named
    elsewhere = load_settings(llm_provider="toy", llm_base_url="http://127.0.0.1:9/v1")
    assert llm_identity(get_llm(elsewhere)) == configured_name(elsewhere, "toy-1") == "toy@http://127.0.0.1:9/v1:toy-1"

    assert price_for("toy", "toy-1").cost(1_000_000, 1_000_000) == pytest.approx(3.0)
    assert cost_usd("toy:toy-1", 1_000_000, 0) == pytest.approx(1.0)
    assert price_for("toy", "toy-2") is None
    assert parse_judge("toy:toy-1") == ("toy", "toy-1")
    with pytest.raises(ConfigError) as caught:
        get_llm(load_settings().model_copy(update={"llm_provider": "nope", "llm_model": "x"}))
    assert caught.value.hint == "set RAG_LAB_LLM_PROVIDER to local, openai, groq, bedrock, openai_compatible or toy"
