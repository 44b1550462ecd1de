"""Token usage of LLM calls, collected from LlamaIndex instrumentation events.

Every LlamaIndex LLM call (ours or a library's) ends with an ``LLMChatEndEvent`` or
``LLMCompletionEndEvent`` carrying the provider's raw response. One root event handler reads
the usage from it and adds it to every ``track_usage()`` block active in the caller's context::

    with track_usage() as usage:
        llm.chat(...)
        llm.complete(...)
    usage.total_tokens, usage.calls

Active blocks live in a ``ContextVar``: nested blocks all see a call, concurrent asyncio tasks
(and ``asyncio.to_thread``) keep their own blocks. Plain threads started inside a block do not
inherit it (run them under ``contextvars.copy_context()`` if they should).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.llm import LLMChatEndEvent, LLMCompletionEndEvent

# Key spellings across providers: OpenAI/Groq/llama.cpp, Anthropic-style, Bedrock Converse.
_PROMPT_KEYS = ("prompt_tokens", "input_tokens", "inputTokens")
_COMPLETION_KEYS = ("completion_tokens", "output_tokens", "outputTokens")
_TOTAL_KEYS = ("total_tokens", "totalTokens")


@dataclass
class TokenUsage:
    """Tokens used by the LLM calls made inside one ``track_usage()`` block."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    calls: int = 0
    # Calls whose response carried no usage (e.g. a stream without usage chunks): counted here
    # so a zero total is never mistaken for "free".
    calls_without_usage: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # A wrapper may report the same provider response twice (BedrockConverse.complete() calls
    # its own instrumented chat()); the raw objects of recent calls let us count it once.
    _recent_raw: deque[Any] = field(default_factory=lambda: deque(maxlen=64), repr=False, compare=False)

    def _record(self, raw: Any, counts: tuple[int, int, int] | None) -> None:
        with self._lock:
            if raw is not None:
                if any(seen is raw for seen in self._recent_raw):
                    return
                self._recent_raw.append(raw)
            self.calls += 1
            if counts is None:
                self.calls_without_usage += 1
                return
            prompt, completion, total = counts
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            self.total_tokens += total


_active: ContextVar[tuple[TokenUsage, ...]] = ContextVar("rag_lab_token_usage", default=())


@contextmanager
def track_usage() -> Iterator[TokenUsage]:
    """Collect the token usage of every LLM call made in this context until the block exits."""
    _ensure_handler()
    usage = TokenUsage()
    token = _active.set((*_active.get(), usage))
    try:
        yield usage
    finally:
        _active.reset(token)


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _first_int(usage: Any, keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = _get(usage, key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value)
    return None


def _counts(usage: Any) -> tuple[int, int, int] | None:
    if usage is None:
        return None
    prompt = _first_int(usage, _PROMPT_KEYS)
    completion = _first_int(usage, _COMPLETION_KEYS)
    if prompt is None and completion is None:
        return None
    prompt, completion = prompt or 0, completion or 0
    total = _first_int(usage, _TOTAL_KEYS)
    return prompt, completion, total if total is not None else prompt + completion


def usage_from_response(response: Any) -> tuple[int, int, int] | None:
    """(prompt, completion, total) tokens of a ChatResponse/CompletionResponse, if reported."""
    if response is None:
        return None
    raw = getattr(response, "raw", None)
    if raw is not None:
        # openai/groq/llama.cpp: raw.usage; Bedrock stream: raw["metadata"]["usage"];
        # Groq streams: raw.x_groq.usage.
        for usage in (_get(raw, "usage"), _get(_get(raw, "metadata"), "usage"),
                      _get(_get(raw, "x_groq"), "usage")):
            counts = _counts(usage)
            if counts is not None:
                return counts
    # LlamaIndex's OpenAI and Bedrock wrappers also copy the counts here.
    return _counts(getattr(response, "additional_kwargs", None))


class _UsageEventHandler(BaseEventHandler):
    @classmethod
    def class_name(cls) -> str:
        return "RagLabUsageEventHandler"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if not isinstance(event, (LLMChatEndEvent, LLMCompletionEndEvent)):
            return
        trackers = _active.get()
        if not trackers:
            return
        response = event.response
        counts = usage_from_response(response)
        raw = getattr(response, "raw", None)
        for usage in trackers:
            usage._record(raw, counts)


_handler_lock = threading.Lock()
_handler: _UsageEventHandler | None = None


def _ensure_handler() -> None:
    """Attach the handler to the root dispatcher once per process (events propagate to it)."""
    global _handler
    with _handler_lock:
        if _handler is None:
            _handler = _UsageEventHandler()
            get_dispatcher().add_event_handler(_handler)
