"""``openai`` provider: LlamaIndex's OpenAI LLM over an openai SDK client we configure."""

from __future__ import annotations

import re

import httpx
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.llms.openai import OpenAI

from rag_lab.config import LLM_PROVIDERS, Settings, llm_api_key
from rag_lab.models.llm._guard import ErrorGuard, GuardedLLMMixin
from rag_lab.models.llm._openai_sdk import build_guarded

# gpt-5 / -mini / -nano are reasoning models: max_tokens becomes max_completion_tokens, which
# reasoning tokens count against. With the default "medium" effort a 512-token budget is often
# spent on reasoning alone and the answer comes back empty; "minimal" keeps it for the answer.
_MINIMAL_REASONING = re.compile(r"gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?")


class RagLabOpenAI(GuardedLLMMixin, OpenAI):
    """LlamaIndex ``OpenAI`` whose failures surface as ``ProviderError``."""

    _guard: ErrorGuard = PrivateAttr()


def build_openai(
    settings: Settings,
    model: str,
    *,
    http_client: httpx.Client | None = None,
    async_http_client: httpx.AsyncClient | None = None,
) -> FunctionCallingLLM:
    spec = LLM_PROVIDERS["openai"]
    key = llm_api_key(settings, spec.name)
    extra: dict = {}
    if _MINIMAL_REASONING.fullmatch(model):
        extra["reasoning_effort"] = "minimal"
    # temperature: LlamaIndex forces 1.0 for reasoning models; base_url None: the SDK's default or OPENAI_BASE_URL
    return build_guarded(RagLabOpenAI, settings, model, provider=spec.label, key_env=spec.key_env,
                         api_key=key.get_secret_value(), secrets=(key,), base_url=None, http_client=http_client,
                         async_http_client=async_http_client,
                         invalid=(f"Cannot use OpenAI model {model!r}", "check RAG_LAB_LLM_MODEL / RAG_LAB_AGENT_MODEL"),
                         # Streams end with a usage chunk, so track_usage() sees streamed calls too.
                         additional_kwargs={"stream_options": {"include_usage": True}}, **extra)
