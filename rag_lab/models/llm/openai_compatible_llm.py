"""``openai_compatible`` provider: any server that speaks OpenAI's chat API (vLLM, Ollama, llama.cpp's
server, TGI, LM Studio, a proxy), through LlamaIndex's ``OpenAILike`` over an openai SDK client we
configure (same retries, timeouts, validation and error messages as the ``openai`` provider).

``RAG_LAB_LLM_BASE_URL`` names the server, ``RAG_LAB_LLM_MODEL`` the model exactly as the server
calls it (no OpenAI model list is consulted), ``RAG_LAB_LLM_CONTEXT_WINDOW`` its context window
(the server does not report it). ``RAG_LAB_LLM_API_KEY`` is optional: many local servers need none.
"""

from __future__ import annotations

import httpx
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.llms.openai_like import OpenAILike

from rag_lab.config import LLM_PROVIDERS, Settings, llm_api_key
from rag_lab.errors import ConfigError
from rag_lab.models.llm._guard import ErrorGuard, GuardedLLMMixin
from rag_lab.models.llm._openai_sdk import build_guarded

NO_KEY = "not-needed"  # what the SDK sends when the server wants no key (it insists on one)


class RagLabOpenAILike(GuardedLLMMixin, OpenAILike):
    """LlamaIndex ``OpenAILike`` whose failures surface as ``ProviderError``."""

    _guard: ErrorGuard = PrivateAttr()


def build_openai_compatible(
    settings: Settings,
    model: str,
    *,
    http_client: httpx.Client | None = None,
    async_http_client: httpx.AsyncClient | None = None,
) -> FunctionCallingLLM:
    base_url = settings.llm_base_url
    if not base_url:
        raise ConfigError("The openai_compatible LLM provider needs the server's address",
                          "set RAG_LAB_LLM_BASE_URL, e.g. http://127.0.0.1:8000/v1 (vLLM) or "
                          "http://127.0.0.1:11434/v1 (Ollama)")
    spec = LLM_PROVIDERS["openai_compatible"]
    key = llm_api_key(settings, spec.name)
    secret = key.get_secret_value().strip() if key is not None else ""
    return build_guarded(
        RagLabOpenAILike, settings, model, provider=spec.label, key_env=spec.key_env, api_key=secret or NO_KEY,
        secrets=(key,) if key is not None else (), base_url=base_url, http_client=http_client,
        async_http_client=async_http_client,
        invalid=(f"Cannot use model {model!r} at {base_url}", "check RAG_LAB_LLM_MODEL and RAG_LAB_LLM_BASE_URL"),
        api_base=base_url, is_chat_model=True,
        # Tool calls: vLLM (with a tool parser), Ollama and llama.cpp's server support them; a
        # server that does not answers the agent's request with an HTTP 400, shown as such.
        is_function_calling_model=True, context_window=settings.llm_context_window)
