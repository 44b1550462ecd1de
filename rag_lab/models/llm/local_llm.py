"""``local`` provider: a catalogued GGUF model (see :mod:`catalog`) on llama.cpp via xllamacpp.

A ``FunctionCallingLLM`` so ``FunctionAgent`` can drive it. Tool calls and structured answers
are JSON-schema constrained (:mod:`chatml_tools`): a forced call's arguments always parse and
have the tool's shape (whether a small model puts sensible values in them is another matter:
callers still validate). ``response_format`` (OpenAI style) and ``grammar`` (GBNF) kwargs pass
through to llama.cpp. Offline, deterministic (temperature 0 → greedy, fixed seed), loaded once
per process; the file's sha256 and GGUF header are checked before it loads.
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
from rag_lab.models.llm.catalog import resolve_model_file
from rag_lab.models.llm.chatml_tools import (
    describe_tools,
    forced_name,
    interpret_reply,
    json_grammar,
    parse_arguments,
    quotes_restored,
    quotes_stood_in,
    resolve_tool_choice,
    schema_of,
    to_chat_response,
    to_llama_messages,
    tool_schema,
)
from rag_lab.models.llm.runtime import DEFAULT_N_CTX, Runtime, load_runtime

if TYPE_CHECKING:
    from llama_index.core.tools.types import BaseTool

# Tool-call JSON must be complete to be usable: its budget never goes below this.
TOOL_CALL_MIN_TOKENS = 128
# A forced call is only arguments (a query, a number or two: ≈ 20–60 tokens). Its budget is capped
# so that a run-away value (Qwen 0.5B wrote a 400-digit threshold: ≈ 20 s) is cut; the cut JSON is
# closed by ``parse_arguments``, keeping what was written.
FORCED_CALL_MAX_TOKENS = 160
# logprobs / top_logprobs: llama.cpp returns the first tokens' probabilities (the judge's verdict by probability)
_PASS_THROUGH = ("stop", "top_p", "top_k", "response_format", "grammar", "json_schema", "seed", "logprobs",
                 "top_logprobs")


class LocalLLM(FunctionCallingLLM):
    """A local GGUF chat model through llama.cpp (xllamacpp), with constrained tool calls."""

    model_name: str = Field(description="Catalog name of the model (or the .gguf path).")
    model_path: str = Field(description="Path of the (verified) GGUF file.")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, ge=1)
    context_window: int = Field(default=DEFAULT_N_CTX, ge=512)
    threads: int | None = Field(default=None, description="CPU threads (None: all cores).")

    @classmethod
    def class_name(cls) -> str:
        return "rag_lab_local_llm"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=self.context_window, num_output=self.max_tokens, is_chat_model=True,
                           is_function_calling_model=True, model_name=self.model_name)

    @property
    def supports_constrained_output(self) -> bool:
        """Accepts ``response_format={"type": "json_schema", …}`` (answers and reranks use it)."""
        return True

    @property
    def runtime(self) -> Runtime:
        # The loaded model is shared by every copy of this LLM with the same file and window.
        return load_runtime(self.model_path, self._n_ctx, self.threads)

    @property
    def _n_ctx(self) -> int:
        return max(self.context_window, DEFAULT_N_CTX)

    # --- generation -------------------------------------------------------------------------
    def _generate(self, messages: Sequence[ChatMessage], tools: list[dict[str, Any]] | None = None,
                  tool_choice: str | dict[str, Any] | None = None, **kwargs: Any) -> ChatResponse:
        budget = kwargs.get("max_tokens") or self.max_tokens
        request: dict[str, Any] = {"temperature": kwargs.get("temperature", self.temperature)}
        request.update({k: kwargs[k] for k in _PASS_THROUGH if k in kwargs})
        schema = request.pop("json_schema", None) or schema_of(request.get("response_format"))
        stood_in = False
        if schema is not None:  # a schema becomes a compact-JSON grammar (see chatml_tools)
            request.pop("response_format", None)
            schema, stood_in = quotes_stood_in(schema)
            request["grammar"] = json_grammar(schema)
        choice = tool_choice or "auto"
        if not tools or choice == "none":
            request["messages"] = to_llama_messages(messages, with_tools=False)
            request["max_tokens"] = budget
            raw = self.runtime.chat(request)
            if stood_in:
                message = raw["choices"][0]["message"]
                message["content"] = quotes_restored(message.get("content") or "")
            return to_chat_response(raw)
        rendered = to_llama_messages(messages, with_tools=True)
        rendered[0] = {**rendered[0], "content": rendered[0]["content"] + "\n" + describe_tools(tools, choice)}
        limit = FORCED_CALL_MAX_TOKENS if forced_name(tools, choice) else max(budget, TOOL_CALL_MIN_TOKENS)
        request.update(messages=rendered, max_tokens=limit, grammar=json_grammar(tool_schema(tools, choice)))
        raw = self.runtime.chat(request)
        text, calls = interpret_reply(raw["choices"][0]["message"].get("content") or "", tools, choice)
        return to_chat_response(raw, text, calls)

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


def build_local(settings: Settings, model: str) -> LocalLLM:
    """The local LLM for ``model`` (a catalog name or a .gguf path), verified and loaded now
    (once per process), not inside the first call."""
    path, _info = resolve_model_file(model, settings.models_dir)
    llm = LocalLLM(model_name=model, model_path=str(path), temperature=settings.llm_temperature,
                   max_tokens=settings.llm_max_tokens, threads=settings.llm_threads)
    _ = llm.runtime
    return llm
