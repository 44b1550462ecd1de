"""The openai SDK as used by the OpenAI, Groq and OpenAI-compatible providers (all speak its API);
``build_guarded`` builds any of their LlamaIndex LLMs over it.

We build the SDK clients ourselves and hand them to LlamaIndex, so that:
- retries are the SDK's own, the one retry layer (429, 408/409, 5xx, connection errors and
  timeouts; exponential backoff 0.5 s → 8 s with jitter, ``Retry-After`` honoured up to 60 s;
  400/401/403/404 never), at most ``settings.max_retries`` per call; LlamaIndex's tenacity layer
  is switched off (``max_retries=0`` on the LLM) and so is RAGAS's (``judge.factory.single_attempt``), or attempts
  would multiply; every retry is reported as it starts (``progress_note``);
- every request has ``settings.request_timeout``;
- responses are validated (``_strict_response_validation``): a malformed body becomes a clear
  error instead of an ``AttributeError`` deep inside LlamaIndex;
- the API key lives only inside the SDK client, never in a pydantic field of the LLM (which
  reprs, dumps and serialises).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx

from rag_lab.config import Settings
from rag_lab.errors import ConfigError, ProviderError
from rag_lab.models.llm._guard import Classifier, ErrorGuard, ProviderAccessError, ProviderRefusedError

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
    label: str = "",
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
    http_client = http_client if http_client is not None else openai.DefaultHttpxClient()
    async_http_client = async_http_client if async_http_client is not None else openai.DefaultAsyncHttpxClient()
    client = openai.OpenAI(http_client=http_client, **common)
    report = RetryReporter(f"{label or 'API'} at {client.base_url}", settings.max_retries)
    report.attach(http_client, async_http_client)
    if settings.llm_rpm:  # RAG_LAB_LLM_RPM: one bucket per endpoint, shared by generator, judge and workers
        from rag_lab.models.rate_limit import attach_rate_limit, bucket_for

        endpoint = str(client.base_url)
        attach_rate_limit(http_client, async_http_client, bucket_for(endpoint, settings.llm_rpm), endpoint,
                          settings.llm_rpm)
    return client, openai.AsyncOpenAI(http_client=async_http_client, **common)


def build_guarded(cls: type, settings: Settings, model: str, *, provider: str, key_env: str, api_key: str,
                  secrets: tuple, base_url: str | None, http_client: httpx.Client | None,
                  async_http_client: httpx.AsyncClient | None, invalid: tuple[str, str], **fields: Any) -> Any:
    """A LlamaIndex LLM of class ``cls`` (a ``GuardedLLMMixin`` subclass) over SDK clients from
    :func:`build_clients`: the settings' temperature, budget and timeout, no LlamaIndex retries, its
    ``ErrorGuard`` attached. ``invalid`` = (what, hint) of the ``ConfigError`` for a model LlamaIndex
    rejects; ``fields`` are the provider's own (``api_base``, ``context_window``, …)."""
    client, aclient = build_clients(settings, api_key=api_key, base_url=base_url, http_client=http_client,
                                    async_http_client=async_http_client, label=f"{provider} {model}")
    try:
        llm = cls(model=model, api_key=KEY_PLACEHOLDER, temperature=settings.llm_temperature,
                  max_tokens=settings.llm_max_tokens, max_retries=0,  # the SDK client retries (see above)
                  timeout=settings.request_timeout, openai_client=client, async_openai_client=aclient, **fields)
        llm.metadata  # unknown model names fail here, not at the first call
    except ValueError as exc:  # includes pydantic's ValidationError
        raise ConfigError(f"{invalid[0]}: {exc}", invalid[1]) from None
    llm._guard = ErrorGuard(provider, model, settings.max_retries + 1, make_classifier(key_env), secrets,
                            endpoint=str(client.base_url))
    return llm


class RetryReporter:
    """httpx event hooks that announce each SDK retry as it starts, with the last failure seen.

    The SDK numbers its attempts in the ``x-stainless-retry-count`` request header (0 = first try)."""

    def __init__(self, what: str, max_retries: int) -> None:
        self.what, self.max_retries = what, max_retries
        self.last_failure: str | None = None

    def attach(self, client: httpx.Client, aclient: httpx.AsyncClient) -> None:
        client.event_hooks["request"].append(self.on_request)
        client.event_hooks["response"].append(self.on_response)
        aclient.event_hooks["request"].append(self._aon_request)
        aclient.event_hooks["response"].append(self._aon_response)

    def on_request(self, request: httpx.Request) -> None:
        try:
            retry = int(request.headers.get("x-stainless-retry-count", "0"))
        except ValueError:
            return
        if retry > 0:
            from rag_lab.progress import progress_note

            why = self.last_failure or "a timeout or connection error"
            progress_note(f"{self.what}: retry {retry} of {self.max_retries} after {why}")
        self.last_failure = None

    def on_response(self, response: httpx.Response) -> None:
        if response.status_code >= 400:
            self.last_failure = f"HTTP {response.status_code}"

    async def _aon_request(self, request: httpx.Request) -> None:
        self.on_request(request)

    async def _aon_response(self, response: httpx.Response) -> None:
        self.on_response(response)


def _server(exc: BaseException) -> str:
    """`` at http://host:port/v1/…``: the URL a connection error could not reach (the user's base URL first)."""
    try:
        url = exc.request.url  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # httpx raises RuntimeError for an unset request
        return ""
    return f" at {url.copy_with(query=None)}"


LLM_SERVER_HINT = "check the network / proxy settings, and that the server runs (RAG_LAB_LLM_BASE_URL / OPENAI_BASE_URL)"
LLM_MODEL_HINT = "check RAG_LAB_LLM_MODEL / RAG_LAB_AGENT_MODEL (and OPENAI_BASE_URL)"


def make_classifier(key_env: str, *, server_hint: str = LLM_SERVER_HINT, model_hint: str = LLM_MODEL_HINT) -> Classifier:
    """Map openai SDK errors (after its retries) to ProviderError; hints name ``key_env``, and what to
    check when the server cannot be reached (``server_hint``) or the model is unknown (``model_hint``):
    the LLMs' settings by default, the embeddings' for ``models.embeddings``."""

    def classify(exc: BaseException, guard: ErrorGuard) -> ProviderError | None:
        import openai

        tries = f"after {guard.attempts} attempt(s)"
        if isinstance(exc, openai.APITimeoutError):
            return guard.error(f"request timed out {tries}", "raise RAG_LAB_REQUEST_TIMEOUT or try again later", exc)
        if isinstance(exc, openai.APIConnectionError):
            return guard.error(f"could not reach the API{_server(exc)} {tries}", server_hint, exc)
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
            return guard.error(f"authentication failed (HTTP {exc.status_code})", f"check {key_env}", exc,
                               ProviderAccessError)
        if isinstance(exc, openai.NotFoundError):
            return guard.error("model or endpoint not found (HTTP 404)", model_hint, exc, ProviderAccessError)
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code >= 500:
                return guard.error(f"server error (HTTP {exc.status_code}) {tries}", "the provider is failing; "
                                   "try again later", exc)
            return guard.error(f"request rejected (HTTP {exc.status_code})", "check the model name and the "
                               "request parameters", exc, ProviderRefusedError)
        if isinstance(exc, openai.OpenAIError):
            return guard.error("API error", "see the message above", exc)
        return None

    return classify
