"""``get_llm``: the one place that turns Settings into a LlamaIndex LLM."""

from __future__ import annotations

from typing import Any

import httpx
from llama_index.core.llms import LLM

from rag_lab.config import Settings
from rag_lab.errors import ConfigError

# Agents make many short tool-routing calls: a cheaper model is the default there.
DEFAULT_AGENT_MODELS: dict[str, str] = {"openai": "gpt-5-nano"}


def resolve_model(settings: Settings, *, model: str | None = None, for_agent: bool = False) -> str:
    """Explicit ``model`` > (for agents) RAG_LAB_AGENT_MODEL or the agent default > the LLM model."""
    if model:
        return model
    if for_agent:
        agent_model = settings.agent_model or DEFAULT_AGENT_MODELS.get(settings.llm_provider)
        if agent_model:
            return agent_model
    return settings.llm_model_name


# Providers whose model window comes from RAG_LAB_LLM_CONTEXT_WINDOW (the server does not report it);
# every other provider's window follows from its model name (local: the runtime's n_ctx; groq, openai,
# bedrock: their tables).
CONTEXT_WINDOW_FROM_SETTINGS = ("openai_compatible",)


def configured_context_window(settings: Settings) -> int | None:
    """The generator's context window when it comes from the settings (it decides how many chunks
    fit the prompt and the agent's history budget), else None (the model name fixes it)."""
    return settings.llm_context_window if settings.llm_provider in CONTEXT_WINDOW_FROM_SETTINGS else None


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
    ``async_http_client`` (openai, groq) and ``bedrock_client`` inject the transport, for tests.
    """
    provider = settings.llm_provider
    name = resolve_model(settings, model=model, for_agent=for_agent)
    if provider == "local":
        from rag_lab.models.llm.local_llm import build_local

        return build_local(settings, name)
    if provider == "openai":
        from rag_lab.models.llm.openai_llm import build_openai

        return build_openai(settings, name, http_client=http_client, async_http_client=async_http_client)
    if provider == "groq":
        from rag_lab.models.llm.groq_llm import build_groq

        return build_groq(settings, name, http_client=http_client, async_http_client=async_http_client)
    if provider == "bedrock":
        from rag_lab.models.llm.bedrock_llm import build_bedrock

        return build_bedrock(settings, name, bedrock_client=bedrock_client)
    if provider == "openai_compatible":
        from rag_lab.models.llm.openai_compatible_llm import build_openai_compatible

        return build_openai_compatible(settings, name, http_client=http_client, async_http_client=async_http_client)
    raise ConfigError(f"Unknown LLM provider {provider!r}",
                      "set RAG_LAB_LLM_PROVIDER to local, openai, groq, bedrock or openai_compatible")
