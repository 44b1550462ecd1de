"""track_usage(): usage read from LlamaIndex end events, per context, across provider shapes."""

from __future__ import annotations

import contextvars
import threading
from types import SimpleNamespace

import pytest
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, CompletionResponse
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.llm import LLMChatEndEvent, LLMCompletionEndEvent
from llama_index.core.llms.mock import MockLLM

from rag_lab.models.llm import TokenUsage, track_usage
from rag_lab.models.llm.usage import usage_from_response

dispatcher = get_dispatcher("tests.models.usage")


def _chat_end(raw=None, additional_kwargs=None) -> ChatResponse:
    response = ChatResponse(message=ChatMessage(role="assistant", content="x"), raw=raw,
                            additional_kwargs=additional_kwargs or {})
    dispatcher.event(LLMChatEndEvent(messages=[], response=response))
    return response


@pytest.mark.parametrize(("raw", "additional", "expected"), [
    ({"usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}, None, (3, 4, 7)),  # llama.cpp
    (SimpleNamespace(usage=SimpleNamespace(prompt_tokens=5, completion_tokens=1, total_tokens=6)), None,
     (5, 1, 6)),  # openai / groq SDK objects
    ({"usage": {"inputTokens": 30, "outputTokens": 6, "totalTokens": 36}}, None, (30, 6, 36)),  # Bedrock
    ({"metadata": {"usage": {"inputTokens": 2, "outputTokens": 2}}}, None, (2, 2, 4)),  # Bedrock stream
    ({"x_groq": {"usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}}}, None,
     (9, 1, 10)),  # Groq stream
    ({"id": "no usage here"}, {"prompt_tokens": 4, "completion_tokens": 4, "total_tokens": 8}, (4, 4, 8)),
    ({"id": "no usage here"}, None, None),
])
def test_usage_shapes(raw, additional, expected):
    response = ChatResponse(message=ChatMessage(content="x"), raw=raw, additional_kwargs=additional or {})
    assert usage_from_response(response) == expected


def test_several_calls_nested_blocks_and_missing_usage():
    with track_usage() as outer:
        _chat_end({"usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
        with track_usage() as inner:
            _chat_end({"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
            MockLLM(max_tokens=3).complete("hello")  # a real LLM call without usage
    _chat_end({"usage": {"prompt_tokens": 100, "completion_tokens": 100, "total_tokens": 200}})  # outside

    assert (inner.prompt_tokens, inner.total_tokens, inner.calls, inner.calls_without_usage) == (1, 2, 2, 1)
    assert (outer.prompt_tokens, outer.completion_tokens, outer.total_tokens) == (11, 3, 14)
    assert (outer.calls, outer.calls_without_usage) == (3, 1)


def test_same_raw_reported_twice_counts_once():
    raw = {"usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}}
    with track_usage() as usage:
        chat = _chat_end(raw)
        dispatcher.event(LLMCompletionEndEvent(prompt="p", response=CompletionResponse(text="x", raw=chat.raw)))
        _chat_end(dict(raw))  # an equal but distinct response is another call
    assert (usage.calls, usage.total_tokens) == (2, 12)


def test_threads_need_the_context_copied_and_are_counted_safely():
    with track_usage() as usage:
        plain = threading.Thread(target=_chat_end, args=({"usage": {"prompt_tokens": 1}},))
        plain.start()
        plain.join()
        assert usage.calls == 0  # a bare thread does not inherit the block

        def work() -> None:
            for _ in range(200):
                _chat_end({"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

        threads = [threading.Thread(target=contextvars.copy_context().run, args=(work,)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert (usage.calls, usage.total_tokens) == (800, 1600)


def test_token_usage_repr_is_plain_numbers():
    assert repr(TokenUsage(1, 2, 3, 1)) == (
        "TokenUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3, calls=1, calls_without_usage=0)")
