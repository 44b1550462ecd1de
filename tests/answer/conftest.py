"""Fixtures for the answering layer: a scripted LLM (deterministic, records its prompts and
reports token usage like a provider would) and the real local SmolLM2, made small for speed."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback

INCOME_QUESTION = "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"
INCOME_FILE = "bcy-26-income-eligibility-and-maximum-psoc-twc.pdf"


class ScriptedLLM(CustomLLM):
    """Answers from ``script`` (a string, or ``prompt -> text``) and keeps every prompt."""

    script: Any = "scripted answer"
    # a record of the calls, not configuration: left out of the LLM's identity (llm_identity hashes model_dump)
    prompts: list[str] = Field(default_factory=list, exclude=True)
    context_window: int = 3900
    # Each instance is its own model unless told otherwise: answers cached for one script never
    # answer another test's (the evaluation cache is keyed by model name).
    model_name: str = Field(default_factory=lambda: f"scripted-{uuid.uuid4().hex[:8]}")

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=self.context_window, num_output=64, model_name=self.model_name)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        text = self.script(prompt) if callable(self.script) else str(self.script)
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": len(text.split())}
        return CompletionResponse(text=text, raw={"usage": usage})

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        raise NotImplementedError("not used by the answering layer")

    @property
    def answer_prompts(self) -> list[str]:
        return [p for p in self.prompts if "numbered documents" in p]

    @property
    def rerank_prompts(self) -> list[str]:
        return [p for p in self.prompts if "relevance score" in p]


def by_task(answer: str, rerank: str = "Doc: 1, Relevance: 5") -> Callable[[str], str]:
    """A script replying ``rerank`` to choice-select prompts and ``answer`` to answer prompts."""
    return lambda prompt: rerank if "relevance score" in prompt else answer


@pytest.fixture
def scripted() -> Callable[..., ScriptedLLM]:
    return lambda script="scripted answer", **kw: ScriptedLLM(script=script, **kw)


@pytest.fixture(scope="session")
def real_llm(lab_settings):
    """SmolLM2 (pinned: fast, whatever the default model is) from ``get_llm``, with short answers and a 768-token window:
    prompt evaluation on these shared CPUs is slow, so prompts are kept to ~600 tokens."""
    from rag_lab.models.llm import get_llm

    settings = lab_settings.model_copy(update={"llm_provider": "local", "llm_model": "SmolLM2-135M-Instruct.Q4_1",
                                                "llm_max_tokens": 32})
    llm = get_llm(settings)
    return llm.model_copy(update={"context_window": 768})
