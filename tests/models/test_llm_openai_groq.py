"""OpenAI and Groq providers at the HTTP layer (httpx.MockTransport): shapes, retries, errors."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from llama_index.core.llms import ChatMessage

from rag_lab.errors import ConfigError, ProviderError
from rag_lab.models.llm import get_llm, track_usage

SECRET = "sk-test-SECRET123"
PROVIDERS = {
    # provider: (settings key field, default model, chat completions URL)
    "openai": ("openai_api_key", "gpt-5-mini", "https://api.openai.com/v1/chat/completions"),
    "groq": ("groq_api_key", "llama-3.3-70b-versatile", "https://api.groq.com/openai/v1/chat/completions"),
}
MESSAGES = [ChatMessage(role="system", content="Answer briefly."),
            ChatMessage(role="user", content="What is BM25?")]


class Recorder:
    """An httpx handler that plays scripted responses and records the requests it got."""

    def __init__(self, *responses: httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]):
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        item = self.responses[min(len(self.requests), len(self.responses)) - 1]
        if isinstance(item, Exception):
            raise item
        return item(request) if callable(item) else item

    def body(self, i: int = 0) -> dict:
        return json.loads(self.requests[i].content)


def _llm(make_settings, provider: str, handler: Recorder, **settings):
    key_field = PROVIDERS[provider][0]
    s = make_settings(llm_provider=provider, **{key_field: SECRET}, **settings)
    return get_llm(s, http_client=httpx.Client(transport=httpx.MockTransport(handler)))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_request_and_response_shapes(provider, make_settings, completion_body):
    _, model, url = PROVIDERS[provider]
    handler = Recorder(httpx.Response(200, json=completion_body(model, "A ranking function.", 21, 4)))
    llm = _llm(make_settings, provider, handler)

    with track_usage() as usage:
        response = llm.chat(MESSAGES)

    assert response.message.content == "A ranking function."
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, usage.calls) == (21, 4, 25, 1)
    [request] = handler.requests
    assert request.method == "POST" and str(request.url) == url
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    body = handler.body()
    assert body["model"] == model
    # gpt-5 models take the system prompt as a "developer" message
    system_role = "developer" if provider == "openai" else "system"
    assert body["messages"] == [{"role": system_role, "content": "Answer briefly."},
                                {"role": "user", "content": "What is BM25?"}]
    assert body.get("stream") is False
    if provider == "openai":  # reasoning model: budget is max_completion_tokens, effort minimal
        assert body["max_completion_tokens"] == 512 and "max_tokens" not in body
        assert body["reasoning_effort"] == "minimal"
    else:
        assert body["max_tokens"] == 512 and body["temperature"] == 0.0


def test_agent_model_defaults(make_settings, completion_body):
    handler = Recorder(httpx.Response(200, json=completion_body("gpt-5-nano", "ok")))
    llm = get_llm(make_settings(llm_provider="openai", openai_api_key=SECRET), for_agent=True,
                  http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    llm.complete("hi")
    assert handler.body()["model"] == "gpt-5-nano"
    s = make_settings(llm_provider="groq", groq_api_key=SECRET, agent_model="llama-3.1-8b-instant")
    assert get_llm(s, for_agent=True).metadata.model_name == "llama-3.1-8b-instant"
    assert get_llm(s, model="openai/gpt-oss-20b").metadata.model_name == "openai/gpt-oss-20b"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_then_200_is_retried(provider, make_settings, completion_body, sdk_sleeps):
    model = PROVIDERS[provider][1]
    limited = httpx.Response(429, json={"error": {"message": "Rate limit reached", "type": "requests",
                                                  "code": "rate_limit_exceeded"}})
    handler = Recorder(limited, httpx.Response(200, json=completion_body(model, "fine", 3, 2)))
    llm = _llm(make_settings, provider, handler, max_retries=2)

    with track_usage() as usage:
        assert llm.complete("hello").text == "fine"

    assert len(handler.requests) == 2
    assert len(sdk_sleeps) == 1 and 0 < sdk_sleeps[0] <= 8
    assert (usage.calls, usage.total_tokens) == (1, 5)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_repeated_500_gives_provider_error_after_bounded_backoff(provider, make_settings, sdk_sleeps):
    handler = Recorder(httpx.Response(500, json={"error": {"message": "upstream exploded"}}))
    llm = _llm(make_settings, provider, handler, max_retries=2)

    with pytest.raises(ProviderError) as info:
        llm.chat(MESSAGES)

    assert len(handler.requests) == 3  # 1 + max_retries, no second retry layer on top
    assert "HTTP 500" in info.value.message and "3 attempt" in info.value.message
    assert "upstream exploded" in info.value.message
    assert len(sdk_sleeps) == 2 and sdk_sleeps[0] < sdk_sleeps[1] <= 8  # exponential, capped


@pytest.mark.parametrize("provider", PROVIDERS)
def test_transport_timeout_is_retried_then_clear_error(provider, make_settings, sdk_sleeps):
    handler = Recorder(httpx.ReadTimeout("read timed out"))
    llm = _llm(make_settings, provider, handler, max_retries=1)

    with pytest.raises(ProviderError) as info:
        llm.chat(MESSAGES)

    assert len(handler.requests) == 2
    assert "timed out" in info.value.message and "RAG_LAB_REQUEST_TIMEOUT" in (info.value.hint or "")


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server that accepts connections and never answers: a provider that hangs."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_hanging_server_times_out_instead_of_hanging(make_settings, silent_server, monkeypatch, sdk_sleeps):
    # A real socket read timeout, through the SDK's own transport (no injected client).
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{silent_server}/v1")
    llm = get_llm(make_settings(llm_provider="openai", openai_api_key=SECRET, request_timeout=0.3, max_retries=1))

    started = time.monotonic()
    with pytest.raises(ProviderError, match="timed out after 2 attempt"):
        llm.complete("hello")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("response", "expected"), [
    (httpx.Response(200, json={"unexpected": "shape"}), "malformed response"),
    (httpx.Response(200, content=b"<html>gateway</html", headers={"content-type": "application/json"}),
     "not valid JSON"),
])
def test_malformed_body_gives_clear_error(provider, response, expected, make_settings):
    handler = Recorder(response)
    llm = _llm(make_settings, provider, handler)

    with pytest.raises(ProviderError, match=expected):
        llm.chat(MESSAGES)
    assert len(handler.requests) == 1  # not retried


def test_streaming_records_usage(make_settings):
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}},
    ]
    sse = "".join(
        "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5-mini",
                               **chunk}) + "\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    handler = Recorder(httpx.Response(200, content=sse.encode(), headers={"content-type": "text/event-stream"}))
    llm = _llm(make_settings, "openai", handler)

    with track_usage() as usage:
        text = "".join(r.delta or "" for r in llm.stream_chat(MESSAGES))

    assert text == "Hello"
    assert handler.body()["stream_options"] == {"include_usage": True}
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.calls_without_usage) == (1, 7, 2, 0)


async def _achat_usage(llm, tokens: int):
    with track_usage() as usage:
        await llm.achat([ChatMessage(role="user", content=f"say {tokens}")])
    return usage


def test_async_calls_tracked_per_task(make_settings, completion_body):
    import asyncio

    def reply(request: httpx.Request) -> httpx.Response:
        n = int(json.loads(request.content)["messages"][0]["content"].split()[1])
        return httpx.Response(200, json=completion_body("gpt-5-mini", "x", n, n))

    llm = get_llm(make_settings(llm_provider="openai", openai_api_key=SECRET),
                  async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(Recorder(reply))))

    async def main():
        with track_usage() as outer:
            a, b = await asyncio.gather(_achat_usage(llm, 10), _achat_usage(llm, 100))
        return outer, a, b

    outer, a, b = asyncio.run(main())
    assert (a.prompt_tokens, a.calls) == (10, 1)  # each task sees only its own call …
    assert (b.prompt_tokens, b.calls) == (100, 1)
    assert (outer.prompt_tokens, outer.total_tokens, outer.calls) == (110, 220, 2)  # … the outer block both


def test_secret_absent_from_reprs_errors_and_logs(make_settings, completion_body, caplog):
    # The server echoes the key back in its error (worst case): our error must not repeat it.
    def unauthorized(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": {"message": f"bad key {request.headers['authorization']}"}})

    ok = httpx.Response(200, json=completion_body("gpt-5-mini", "fine"))
    handler = Recorder(ok, unauthorized)
    settings = make_settings(llm_provider="openai", openai_api_key=SECRET)
    llm = get_llm(settings, http_client=httpx.Client(transport=httpx.MockTransport(handler)))

    with caplog.at_level(logging.DEBUG):
        llm.chat(MESSAGES)
        with pytest.raises(ProviderError) as info:
            llm.chat(MESSAGES)

    assert handler.requests[1].headers["authorization"] == f"Bearer {SECRET}"  # the key was used …
    err = info.value
    assert "authentication failed" in err.message and "OPENAI_API_KEY" in (err.hint or "")
    assert "***" in err.message  # … and scrubbed from the echoed body
    for text in (repr(llm), str(llm), llm.model_dump_json(), json.dumps(llm.to_payload()), repr(settings),
                 str(err), repr(err), repr(err.args), caplog.text):
        assert SECRET not in text
    assert err.__cause__ is None  # the SDK error holding the echoed key is not chained


@pytest.mark.parametrize(("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("groq", "GROQ_API_KEY"),
                                                    ("bedrock", "AWS_REGION")])
def test_missing_credentials_name_the_variable(provider, variable, make_settings):
    with pytest.raises(ConfigError) as info:
        get_llm(make_settings(llm_provider=provider))
    assert variable in str(info.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_async_streaming_path_retries_then_errors_clearly(provider, make_settings, monkeypatch):
    # The path FunctionAgent takes: astream_chat on the AsyncOpenAI client.
    import asyncio
    import types

    import openai._base_client as base

    sleeps: list[float] = []

    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    monkeypatch.setattr(base, "anyio", types.SimpleNamespace(sleep=record))
    handler = Recorder(httpx.Response(503, json={"error": {"message": "overloaded"}}))
    key_field = PROVIDERS[provider][0]
    llm = get_llm(make_settings(llm_provider=provider, max_retries=2, **{key_field: SECRET}),
                  async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))

    async def consume() -> None:
        async for _ in await llm.astream_chat(MESSAGES):
            pass

    with pytest.raises(ProviderError, match="HTTP 503"):
        asyncio.run(consume())
    assert len(handler.requests) == 3 and len(sleeps) == 2
    assert handler.body()["stream"] is True
