"""``get_llm``: the one place that turns Settings into a LlamaIndex LLM (each provider's builder is
named by its row in :data:`rag_lab.config.LLM_PROVIDERS`)."""

from __future__ import annotations

import inspect
from typing import Any

import httpx
from llama_index.core.llms import LLM

from rag_lab.config import LLM_PROVIDERS, Settings
from rag_lab.errors import ConfigError, one_of


def resolve_model(settings: Settings, *, model: str | None = None, for_agent: bool = False) -> str:
    """Explicit ``model`` > (for agents) RAG_LAB_AGENT_MODEL or the provider's agent default > the LLM model."""
    if model:
        return model
    if for_agent:
        spec = LLM_PROVIDERS.get(settings.llm_provider)
        agent_model = settings.agent_model or (spec.agent_model if spec else None)
        if agent_model:
            return agent_model
    return settings.llm_model_name


def configured_context_window(settings: Settings) -> int | None:
    """The generator's context window when it comes from the settings (it decides how many chunks
    fit the prompt and the agent's history budget), else None (the model name fixes it: local, the
    runtime's n_ctx; groq, openai, bedrock, their tables)."""
    spec = LLM_PROVIDERS.get(settings.llm_provider)
    return settings.llm_context_window if spec is not None and spec.window_from_settings else None


def get_llm(
    settings: Settings,
    *,
    model: str | None = None,
    for_agent: bool = False,
    http_client: httpx.Client | None = None,
    async_http_client: httpx.AsyncClient | None = None,
    bedrock_client: Any = None,
) -> LLM:
    """The configured LLM: local (default, offline) | openai | groq | bedrock | openai_compatible.

    Every returned LLM is a ``FunctionCallingLLM`` (usable by ``FunctionAgent``). Remote providers
    retry 429/5xx/timeouts with bounded backoff (``settings.max_retries``), time out after
    ``settings.request_timeout`` and then raise ``ProviderError``. ``http_client`` /
    ``async_http_client`` (openai, groq) and ``bedrock_client`` inject the transport, for tests:
    each builder is given the ones it takes.
    """
    name = resolve_model(settings, model=model, for_agent=for_agent)
    spec = LLM_PROVIDERS.get(settings.llm_provider)
    if spec is None:
        raise ConfigError(f"Unknown LLM provider {settings.llm_provider!r}",
                          f"set RAG_LAB_LLM_PROVIDER to {one_of(LLM_PROVIDERS)}")
    build = spec.load_builder()
    transports = {"http_client": http_client, "async_http_client": async_http_client, "bedrock_client": bedrock_client}
    taken = inspect.signature(build).parameters
    return build(settings, name, **{k: v for k, v in transports.items() if k in taken})
