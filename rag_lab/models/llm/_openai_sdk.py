"""The openai SDK as used by both the OpenAI and the Groq provider (Groq speaks its API).

We build the SDK clients ourselves and hand them to LlamaIndex, so that:
- retries are the SDK's own (429, 408/409, 5xx, connection errors and timeouts; exponential
  backoff 0.5 s → 8 s with jitter, ``Retry-After`` honoured up to 60 s), bounded by
  ``settings.max_retries``; LlamaIndex's extra tenacity layer is switched off (``max_retries=0``
  on the LLM) or attempts would multiply;
- every request has ``settings.request_timeout``;
- responses are validated (``_strict_response_validation``): a malformed body becomes a clear
  error instead of an ``AttributeError`` deep inside LlamaIndex;
- the API key lives only inside the SDK client, never in a pydantic field of the LLM (which
  reprs, dumps and serialises).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import httpx

from rag_lab.config import Settings
from rag_lab.errors import ProviderError
from rag_lab.models.llm._guard import Classifier, ErrorGuard

if TYPE_CHECKING:
    import openai

# What LlamaIndex's pydantic ``api_key`` field holds instead of the key: never used for a
# request (we always pass our own clients), so nothing secret can leak through it.
KEY_PLACEHOLDER = "managed-by-rag-lab"


def build_clients(
    settings: Settings,
    *,
    api_key: str,
    base_url: str | None,
    http_client: httpx.Client | None,
    async_http_client: httpx.AsyncClient | None,
) -> tuple[openai.OpenAI, openai.AsyncOpenAI]:
    import openai

    # Connecting should be quick even when generating is slow.
    timeout = httpx.Timeout(settings.request_timeout, connect=min(settings.request_timeout, 10.0))
    common: dict = dict(
        api_key=api_key,
        base_url=base_url,
        max_retries=settings.max_retries,
        timeout=timeout,
        _strict_response_validation=True,
    )
    return (
        openai.OpenAI(http_client=http_client, **common),
        openai.AsyncOpenAI(http_client=async_http_client, **common),
    )


def make_classifier(key_env: str) -> Classifier:
    """Map openai SDK errors (after its retries) to ProviderError; hints name ``key_env``."""

    def classify(exc: BaseException, guard: ErrorGuard) -> ProviderError | None:
        import openai

        tries = f"after {guard.attempts} attempt(s)"
        if isinstance(exc, openai.APITimeoutError):
            return guard.error(f"request timed out {tries}", "raise RAG_LAB_REQUEST_TIMEOUT or try again later", exc)
        if isinstance(exc, openai.APIConnectionError):
            return guard.error(f"could not reach the API {tries}", "check the network / proxy settings", exc)
        if isinstance(exc, openai.APIResponseValidationError):
            return guard.error("malformed response body", "the API returned something unexpected; try again "
                               "or report it", exc)
        if isinstance(exc, json.JSONDecodeError):
            return guard.error("response body is not valid JSON", "the API returned something unexpected; "
                               "try again or report it", exc)
        if isinstance(exc, openai.RateLimitError):
            return guard.error(f"rate limited (HTTP 429) {tries}", "wait, lower concurrency or raise "
                               "RAG_LAB_MAX_RETRIES; check your quota", exc)
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return guard.error(f"authentication failed (HTTP {exc.status_code})", f"check {key_env}", exc)
        if isinstance(exc, openai.NotFoundError):
            return guard.error("model or endpoint not found (HTTP 404)", "check RAG_LAB_LLM_MODEL / "
                               "RAG_LAB_AGENT_MODEL", exc)
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code >= 500:
                return guard.error(f"server error (HTTP {exc.status_code}) {tries}", "the provider is failing; "
                                   "try again later", exc)
            return guard.error(f"request rejected (HTTP {exc.status_code})", "check the model name and the "
                               "request parameters", exc)
        if isinstance(exc, openai.OpenAIError):
            return guard.error("API error", "see the message above", exc)
        return None

    return classify
