"""Shared fixtures for the LLM provider tests: clean env, settings, fake provider payloads."""

from __future__ import annotations

import time
import types
from collections.abc import Callable
from typing import Any

import pytest

from rag_lab.config import Settings

SECRET = "sk-test-SECRET123"

_PROVIDER_ENV = (
    "OPENAI_API_KEY", "GROQ_API_KEY", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "OPENAI_BASE_URL",
    "OPENAI_API_BASE", "RAG_LAB_LLM_PROVIDER", "RAG_LAB_LLM_MODEL", "RAG_LAB_AGENT_MODEL",
    "RAG_LAB_MAX_RETRIES", "RAG_LAB_REQUEST_TIMEOUT", "RAG_LAB_LLM_MAX_TOKENS", "RAG_LAB_LLM_TEMPERATURE",
)


@pytest.fixture(autouse=True)
def _clean_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests must not see (or use) real credentials or endpoints from the machine."""
    for name in _PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def make_settings() -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        return Settings(_env_file=None, **overrides)  # type: ignore[call-arg]

    return make


@pytest.fixture
def sdk_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Backoff delays the openai SDK asks for, recorded instead of slept (tests stay fast)."""
    import openai._base_client as base

    sleeps: list[float] = []
    monkeypatch.setattr(base, "time", types.SimpleNamespace(sleep=sleeps.append, time=time.time))
    return sleeps


def chat_completion(model: str, text: str, prompt_tokens: int = 12, completion_tokens: int = 5) -> dict:
    """A chat.completions response body as OpenAI and Groq send it."""
    return {
        "id": "chatcmpl-9xYz",
        "object": "chat.completion",
        "created": 1_730_000_000,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text, "refusal": None, "annotations": []},
            "logprobs": None,
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
        },
        "service_tier": "default",
        "system_fingerprint": "fp_test",
    }


@pytest.fixture
def completion_body() -> Callable[..., dict]:
    return chat_completion
