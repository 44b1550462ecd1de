"""The local runtime: llama.cpp's server, in-process, through ``xllamacpp`` (a prebuilt CPU wheel).

No compiler at install time and no HTTP: ``xllamacpp.Server`` takes an OpenAI-style
chat-completion request (a dict) and returns the response dict, with llama.cpp's own chat
templates (jinja, from the GGUF header), ``response_format`` JSON schemas and GBNF grammars for
constrained output, and per-request timings. One server per (file, threads) per process, with
the largest context window asked for; a lock serialises requests (one slot: no parallel decoding on 2 cores).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from rag_lab.errors import ConfigError, ProviderError

# llama.cpp's CPU threads meet at a barrier after every op; with OpenMP's default (spinning)
# waits, a core shared with other work makes generation 10-20x slower (measured here: SmolLM2,
# 2 threads, busy machine: 1.1 tok/s spinning, 10 tok/s passive). Passive waits cost little alone.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

SEED = 0
DEFAULT_N_CTX = 4096


def default_threads() -> int:
    return max(os.cpu_count() or 1, 1)


@dataclass
class Runtime:
    """One loaded model. ``chat`` runs one request; ``load_seconds`` is what loading took."""

    path: str
    n_ctx: int
    threads: int
    server: Any
    load_seconds: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    # llama.cpp's timings of the last request (prompt_n, prompt_ms, predicted_n, predicted_ms, …)
    last_timings: dict[str, float] = field(default_factory=dict)

    def chat(self, request: dict[str, Any]) -> dict[str, Any]:
        request = {"seed": SEED, "temperature": 0.0, **request}
        with self.lock:
            try:
                response = self.server.handle_chat_completions(request)
            except ValueError as exc:  # e.g. a JSON schema llama.cpp cannot turn into a grammar
                raise ProviderError(f"local model rejected the request: {exc}",
                                    "check the response_format / grammar passed to the local LLM") from None
        if not isinstance(response, dict):
            raise ProviderError(f"local model returned {type(response).__name__}, not a response", "report a bug")
        error = response.get("error")
        if error:
            message = error.get("message", error) if isinstance(error, dict) else error
            hint = ("shorten the prompt (fewer or smaller chunks) or raise the context window"
                    if "context" in str(message) else "check the request")
            raise ProviderError(f"local model: {message}", hint)
        self.last_timings = dict(response.get("timings") or {})
        return response


_load_lock = threading.Lock()
_runtimes: dict[tuple[str, int], Runtime] = {}  # (path, threads) -> the one loaded runtime


def load_runtime(path: str, n_ctx: int = DEFAULT_N_CTX, threads: int | None = None) -> Runtime:
    """The runtime for ``path`` (loaded on first use, then shared within the process).

    One model file is loaded once per thread count: a request for a window no larger than the
    loaded one reuses it (the judge's 16k window serves the generator's 4k). A larger window loads
    the model again and replaces the smaller runtime, which is freed once its last request ends."""
    threads = threads or default_threads()
    key = (str(path), threads)
    with _load_lock:
        loaded = _runtimes.get(key)
        if loaded is None or loaded.n_ctx < n_ctx:
            start = time.perf_counter()
            server = _load_server(str(path), n_ctx, threads)
            _runtimes[key] = Runtime(str(path), n_ctx, threads, server, time.perf_counter() - start)
        return _runtimes[key]


def _load_server(path: str, n_ctx: int, threads: int) -> Any:
    """llama.cpp's in-process server for ``path`` with an ``n_ctx``-token window."""
    try:
        import xllamacpp
    except ImportError:
        raise ConfigError("xllamacpp (the local LLM runtime) is not installed",
                          "run `pip install xllamacpp` (a prebuilt wheel), or `make install`") from None
    params = xllamacpp.CommonParams()
    params.model.path = path
    params.n_ctx = n_ctx
    params.n_parallel = 1  # one slot: the whole context for one request
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.warmup = False
    params.offline = True
    params.verbosity = -1  # llama.cpp's log off
    try:
        return xllamacpp.Server(params)
    except Exception as exc:  # noqa: BLE001 - xllamacpp raises plain RuntimeErrors
        raise ConfigError(f"Cannot load the local model {path}: {exc}",
                          "check the file (RAG_LAB_LLM_MODEL) or reinstall the model's packages") from None


def loaded_runtimes() -> list[Runtime]:
    return list(_runtimes.values())
