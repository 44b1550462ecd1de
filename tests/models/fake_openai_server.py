"""A fake OpenAI-compatible server on 127.0.0.1 (threaded ``http.server``), for driving the real
openai SDK, LlamaIndex and RAGAS over real HTTP. It counts every request and can misbehave:

- ``reply``: a chat completion whose content is ``reply(prompt)`` (a well-behaved judge, or junk text);
- ``status``: that HTTP status with an OpenAI-style error body (500, 401 …);
- ``junk_body``: HTTP 200 with a body that is not JSON;
- ``hang``: accept the request and never answer (until the server stops);
- ``latency``: seconds to wait before answering (a callable for a random latency);
- ``fault(seen) -> (status, headers) | None``: a per-request failure, e.g. ``(429, {"Retry-After": "1"})``.
It also records the most requests it was answering at once (``max_in_flight``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:  # a client that gave up (deadline, cancel)
        pass


@dataclass
class Seen:
    path: str
    retry_count: int  # the SDK's x-stainless-retry-count header: 0 = first attempt of a call
    prompt: str
    model: str
    at: float = 0.0  # time.monotonic() when the request arrived


@dataclass
class FakeOpenAI:
    reply: Callable[[str], str] | None = None
    status: int | None = None
    junk_body: bool = False
    hang: bool = False
    error_message: str = "Incorrect API key provided: sk-te****123. You can find your API key at platform."
    latency: float | Callable[[], float] = 0.0
    fault: Callable[[Seen], tuple[int, dict] | None] | None = None
    requests: list[Seen] = field(default_factory=list)
    max_in_flight: int = 0

    def __post_init__(self) -> None:
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._in_flight = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with fake._lock:
                    fake._in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake._in_flight)
                try:
                    fake._handle(self, body)
                finally:
                    with fake._lock:
                        fake._in_flight -= 1

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def first_attempts(self) -> int:
        return sum(1 for r in self.requests if r.retry_count == 0)

    def _handle(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        messages = body.get("messages") or [{}]
        content = messages[-1].get("content", "")
        prompt = content if isinstance(content, str) else content[0].get("text", "") if content else ""
        seen = Seen(handler.path, int(handler.headers.get("x-stainless-retry-count", 0)), prompt, body.get("model", ""),
                    time.monotonic())
        with self._lock:
            self.requests.append(seen)
        delay = self.latency() if callable(self.latency) else self.latency
        if delay > 0:
            time.sleep(delay)
        failure = self.fault(seen) if self.fault is not None else None
        if failure is not None:
            status, headers = failure
            kind = "rate_limit_exceeded" if status == 429 else "server_error"
            self._send(handler, status, {"error": {"message": f"fake {status}", "type": kind}}, headers=headers)
            return
        if self.hang:
            self._release.wait(120)
            handler.close_connection = True
            return
        if self.status is not None:
            kind = "invalid_request_error" if self.status < 500 else "server_error"
            self._send(handler, self.status, {"error": {"message": self.error_message if self.status in (401, 403)
                                                        else f"fake server error {self.status}", "type": kind}})
            return
        if self.junk_body:
            self._send(handler, 200, b"<html>upstream proxy error</html>", content_type="text/html")
            return
        if handler.path.endswith("/embeddings"):  # a deterministic 4-d vector per input text
            texts = body.get("input") or []
            texts = [texts] if isinstance(texts, str) else texts
            self._send(handler, 200, {"object": "list", "model": body.get("model"), "usage": {
                "prompt_tokens": 1, "total_tokens": 1}, "data": [
                {"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0, float(i)]}
                for i, t in enumerate(texts)]})
            return
        text = self.reply(prompt) if self.reply else "ok"
        self._send(handler, 200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 1_730_000_000, "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text, "refusal": None}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload, content_type: str = "application/json",
              headers: dict | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            handler.send_response(status)
            handler.send_header("content-type", content_type)
            handler.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (deadline): fine
            pass

    def close(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()


def run_within(seconds: float, fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a thread given at most ``seconds``: (its value, seconds taken).
    A test that hits a server bounds every call, so a regression fails instead of hanging CI."""
    result: dict = {}

    def work() -> None:
        try:
            result["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            result["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds:.0f} s"
    if "error" in result:
        raise result["error"]
    return result["value"], time.monotonic() - started
