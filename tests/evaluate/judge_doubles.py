"""A schema-constrained LLM double for the judge tests: it says it takes a JSON schema (so RAGAS's
metrics get the ``ConstrainedJudge``), records every request and answers with ``reply``."""

from __future__ import annotations

from typing import Any, ClassVar

from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback


class ConstrainedLLM(CustomLLM):
    """Subclasses define ``reply(prompt, **kwargs) -> str``; ``requests`` holds prompt and options."""

    requests: list[dict[str, Any]] = []
    name: ClassVar[str] = "scripted"
    usage: ClassVar[tuple[int, int]] = (50, 10)  # prompt and completion tokens per call

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=self.name)

    @property
    def supports_constrained_output(self) -> bool:
        return True

    @property
    def prompts(self) -> list[str]:
        return [r["prompt"] for r in self.requests]

    def reply(self, prompt: str, **kwargs: Any) -> str:
        raise NotImplementedError

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.requests.append({"prompt": prompt, **kwargs})
        text = self.reply(prompt, **kwargs)
        return CompletionResponse(text=text, raw={"usage": {"prompt_tokens": self.usage[0],
                                                            "completion_tokens": self.usage[1]}})

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any):
        raise NotImplementedError


class VerdictLLM(ConstrainedLLM):
    """The local judge's verdict call as a double: every (premise, statement) gets P(yes) = ``p``
    through the log-probabilities llama.cpp returns (``runtime`` makes it pass for the local model);
    ``asked`` holds the prompts. A score equal to ``p`` means the model decided every statement and
    no rule did."""

    name: ClassVar[str] = "verdict-double"
    p: float = 0.9
    runtime: Any = True
    asked: ClassVar[list[str]] = []

    def chat(self, messages: Any, **kwargs: Any) -> Any:
        import math

        from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole

        self.asked.append(messages[-1].content)
        top = [{"token": "Yes", "logprob": math.log(self.p)}, {"token": "No", "logprob": math.log(1 - self.p)}]
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content="Yes"),
                            raw={"choices": [{"logprobs": {"content": [{"top_logprobs": top}]}}], "usage": {}})
