"""``groq`` provider: LlamaIndex's Groq LLM (OpenAI-compatible API) over an openai SDK client."""

from __future__ import annotations

import httpx
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.llms.groq import Groq

from rag_lab.config import LLM_PROVIDERS, Settings, llm_api_key
from rag_lab.models.llm._guard import ErrorGuard, GuardedLLMMixin
from rag_lab.models.llm._openai_sdk import build_guarded

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
    spec = LLM_PROVIDERS["groq"]
    key = llm_api_key(settings, spec.name)
    return build_guarded(RagLabGroq, settings, model, provider=spec.label, key_env=spec.key_env,
                         api_key=key.get_secret_value(), secrets=(key,), base_url=spec.default_endpoint,
                         http_client=http_client, async_http_client=async_http_client,
                         invalid=(f"Cannot use Groq model {model!r}", "check RAG_LAB_LLM_MODEL / RAG_LAB_AGENT_MODEL"),
                         api_base=spec.default_endpoint,
                         context_window=GROQ_CONTEXT_WINDOWS.get(model, DEFAULT_CONTEXT_WINDOW))
