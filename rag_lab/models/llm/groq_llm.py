"""``groq`` provider: LlamaIndex's Groq LLM (OpenAI-compatible API) over an openai SDK client."""

from __future__ import annotations

import httpx
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.llms.groq import Groq

from rag_lab.config import Settings
from rag_lab.errors import ConfigError
from rag_lab.models.llm._guard import ErrorGuard, GuardedLLMMixin
from rag_lab.models.llm._openai_sdk import build_guarded

KEY_ENV = "GROQ_API_KEY"
GROQ_API_BASE = "https://api.groq.com/openai/v1"

# OpenAILike cannot look context windows up; unknown models get a conservative 8k.
GROQ_CONTEXT_WINDOWS: dict[str, int] = {
    "llama-3.3-70b-versatile": 131_072,
    "llama-3.1-8b-instant": 131_072,
    "openai/gpt-oss-120b": 131_072,
    "openai/gpt-oss-20b": 131_072,
}
DEFAULT_CONTEXT_WINDOW = 8_192


class RagLabGroq(GuardedLLMMixin, Groq):
    """LlamaIndex ``Groq`` whose failures surface as ``ProviderError``."""

    _guard: ErrorGuard = PrivateAttr()


def build_groq(
    settings: Settings,
    model: str,
    *,
    http_client: httpx.Client | None = None,
    async_http_client: httpx.AsyncClient | None = None,
) -> FunctionCallingLLM:
    key = settings.groq_api_key
    if key is None or not key.get_secret_value().strip():
        raise ConfigError("The groq LLM provider needs an API key", f"set {KEY_ENV} (in the environment or .env)")
    return build_guarded(RagLabGroq, settings, model, provider="Groq", key_env=KEY_ENV, api_key=key.get_secret_value(),
                         secrets=(key,), base_url=GROQ_API_BASE, http_client=http_client,
                         async_http_client=async_http_client,
                         invalid=(f"Cannot use Groq model {model!r}", "check RAG_LAB_LLM_MODEL / RAG_LAB_AGENT_MODEL"),
                         api_base=GROQ_API_BASE, context_window=GROQ_CONTEXT_WINDOWS.get(model, DEFAULT_CONTEXT_WINDOW))
