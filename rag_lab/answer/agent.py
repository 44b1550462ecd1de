"""Agent mode: a LlamaIndex ``FunctionAgent`` that searches with one tool and answers with citations.

    agent = RagAgent(settings, "texas_childcare")     # retriever: fusion; LLM: get_llm(for_agent=True)
    answer = agent.chat("What is …?")                 # -> Answer (mode "agent"), also in Jupyter
    answer = agent.chat("And for a family of 6?")     # follow-ups see the history
    agent.reset()                                     # forget it

One turn: the model calls ``retrieve_context`` (arguments validated, see :mod:`agent_tool`), reads
the numbered chunks, maybe searches again, and replies ``ANSWER: … SOURCES: …`` (parsed by
:mod:`agent_reply` into the shared :class:`Answer`). Bounds, so that no turn can run away:

- at most ``max_tool_calls`` searches; the next call is answered "limit reached, answer now", and
  after that the model is asked for its answer without tools (any call it still makes is dropped);
- ``max_iterations`` and ``timeout`` on the workflow as the last resort;
- **grounding guarantee** (``ground=True``): a turn that ends without any search is redone with
  one search for the user's question itself, inserted as if the model had made it, so the final
  answer is always based on retrieved chunks;
- ``force_retrieval`` (default: on for the local model) makes the first step a forced tool call:
  a 135M model then spends its first generation on a (validated) search rather than on an
  ungrounded answer that the guarantee would throw away.

History: the system message plus the last ``max_history`` messages, only questions and final
replies. Tool exchanges stay inside their turn: ``[Doc N]`` numbers restart every turn, and old
chunks would crowd a small model's window (history also never takes over 1/4 of the window).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms.llm import LLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import AsyncBaseTool
from workflows.errors import WorkflowTimeoutError

from rag_lab.answer.agent_reply import SYSTEM_PROMPT, parse_reply, reply_sources
from rag_lab.answer.agent_runtime import run_async, run_sync
from rag_lab.answer.agent_tool import (
    DEFAULT_TOP_K,
    MAX_TOP_K,
    TOOL_NAME,
    TOOL_PREAMBLE_TOKENS,
    RetrievalTool,
    Turn,
)
from rag_lab.answer.context import estimate_tokens
from rag_lab.answer.prompt import render_structured_answer, unique_sources
from rag_lab.answer.types import USAGE_KEYS, Answer, Chunk
from rag_lab.config import Settings
from rag_lab.errors import ConfigError, ProviderError

DEFAULT_RETRIEVAL_MODE = "fusion"
DEFAULT_MAX_TOOL_CALLS = 3
LOCAL_MAX_TOOL_CALLS = 1
LOCAL_TIMEOUT_FACTOR = 5  # CPU generation: a call may take minutes on a busy machine
DEFAULT_MAX_HISTORY = 20
HISTORY_SHARE = 4  # history never takes more than 1/HISTORY_SHARE of the context window
TOOL_CALL_TOKENS = 128  # room kept for the model's next tool call (the local model's minimum)
_NO_TRIM = 10**9

__all__ = ["DEFAULT_MAX_HISTORY", "DEFAULT_MAX_TOOL_CALLS", "SYSTEM_PROMPT", "TOOL_NAME", "RagAgent", "Turn"]


def without_tool_calls(response: ChatResponse) -> ChatResponse:
    message = response.message
    message.blocks = [b for b in message.blocks if not isinstance(b, ToolCallBlock)] or [TextBlock(text="")]
    message.additional_kwargs.pop("tool_calls", None)
    return response


# Pydantic attributes that warn when read on an instance (deprecated since pydantic 2.0 / 2.11).
_DEPRECATED_INSTANCE_ATTRS = frozenset({"__fields__", "__fields_set__", "model_fields", "model_computed_fields"})


class CappedFunctionAgent(FunctionAgent):
    """``FunctionAgent`` that stops offering tools once ``tools_exhausted()`` says so."""

    tools_exhausted: Callable[[], bool] = Field(default=lambda: False, exclude=True)
    # For LLMs with constrained output: the tool-less answer is the engines' JSON answer
    # ({"answer", "cited"}), rendered by this function to text with [Doc N: file, Page X].
    render_structured: Callable[[str], str] | None = Field(default=None, exclude=True)

    def __dir__(self) -> list[str]:
        # The workflow finds its steps with inspect.getmembers(self), which reads every name in
        # dir(self); on a pydantic model that includes attributes pydantic deprecates on instances
        # (four deprecation warnings per agent). None of them is a step: leave them out.
        return [name for name in super().__dir__() if name not in _DEPRECATED_INSTANCE_ATTRS]

    async def _get_response(self, current_llm_input: list[ChatMessage],
                            tools: Sequence[AsyncBaseTool]) -> ChatResponse:
        if not self.tools_exhausted():
            return await super()._get_response(current_llm_input, tools)
        # The model already got "limit reached, answer now" and still wanted to search: ask for
        # the answer without tools, and drop any call it makes anyway (the turn must end).
        if self.render_structured is not None and getattr(self.llm, "supports_constrained_output", False):
            from rag_lab.answer.prompt import ANSWER_SCHEMA

            response = without_tool_calls(await self.llm.achat(current_llm_input, json_schema=ANSWER_SCHEMA))
            response.message.blocks = [TextBlock(text=self.render_structured(response.message.content or ""))]
            return response
        return without_tool_calls(await self.llm.achat(current_llm_input))


def _is_local(llm: LLM) -> bool:
    from rag_lab.models.llm.local_llm import LocalLLM

    return isinstance(llm, LocalLLM)


def _text(messages: Sequence[ChatMessage]) -> str:
    return "\n".join(m.content or "" for m in messages)


class RagAgent:
    """A multi-turn, tool-calling RAG agent answering with the shared :class:`Answer`.

    ``settings`` (default ``get_settings()``), ``dataset`` (for index modes), ``llm`` (default
    ``get_llm(settings, for_agent=True)``; must be a function-calling LLM). ``retrieval_mode`` is
    any registry mode (``retriever`` replaces it, e.g. a stub); ``top_k`` is the chunks per
    search when the model does not say; ``retrieval_params`` go to the registry (prefetch,
    fusion_k, …; unknown ones, like the engines' ``top_n``, are ignored). ``timeout`` (seconds per
    workflow run; a grounded turn has two) defaults to ``request_timeout × (max_tool_calls + 3)``.
    A retriever error fails the turn (raised) when every search of the turn failed.
    """

    mode = "agent"

    def __init__(
        self,
        settings: Settings | None = None,
        dataset: Any = None,
        llm: LLM | None = None,
        *,
        retrieval_mode: str = DEFAULT_RETRIEVAL_MODE,
        retriever: BaseRetriever | None = None,
        top_k: int = DEFAULT_TOP_K,
        max_tool_calls: int | None = None,
        max_history: int = DEFAULT_MAX_HISTORY,
        timeout: float | None = None,
        force_retrieval: bool | None = None,
        ground: bool = True,
        system_prompt: str = SYSTEM_PROMPT,
        **retrieval_params: Any,
    ) -> None:
        if settings is None:
            from rag_lab.config import get_settings

            settings = get_settings()
        if max_history < 0:
            raise ValueError(f"max_history must be ≥ 0, got {max_history}")
        if retriever is None:
            # The retriever first: a missing index fails before the LLM loads.
            from rag_lab.retrieve import build_retriever

            retriever = build_retriever(retrieval_mode, settings, dataset, top_k=MAX_TOP_K, **retrieval_params)
        if llm is None:
            from rag_lab.models.llm import get_llm

            llm = get_llm(settings, for_agent=True)
        meta = llm.metadata
        if not meta.is_function_calling_model:
            raise ConfigError(f"LLM {meta.model_name!r} cannot call tools", "agent mode needs a function-calling "
                              "LLM: use get_llm(settings, for_agent=True)")
        self.llm = llm
        self.retrieval_mode = retrieval_mode
        self.max_history = max_history
        self.ground = ground
        self.system_prompt = system_prompt
        self.context_window = meta.context_window
        local = _is_local(llm)
        if max_tool_calls is None:
            # A local model searches once (forced, schema-constrained), then answers in JSON: every
            # further search would cost a whole prompt evaluation on CPU.
            max_tool_calls = LOCAL_MAX_TOOL_CALLS if local else DEFAULT_MAX_TOOL_CALLS
        per_call = settings.request_timeout * (LOCAL_TIMEOUT_FACTOR if local else 1)
        self.timeout = timeout if timeout is not None else per_call * (max_tool_calls + 3)
        self.max_iterations = max_tool_calls + 4  # cap + "answer now" + tool-less answer + slack
        self.tool = RetrievalTool(retriever, max_calls=max_tool_calls, default_top_k=top_k,
                                  context_window=meta.context_window, context_lines=settings.context_lines,
                                  reserve_tokens=max(meta.num_output or 0, TOOL_CALL_TOKENS))
        tool = self.tool.as_tool()
        # Function-calling templates render the parameter schema (plus a fixed preamble).
        spec = tool.metadata.to_openai_tool(skip_length_check=True)["function"]
        self._tool_tokens = estimate_tokens(json.dumps(spec["parameters"])) + TOOL_PREAMBLE_TOKENS
        force = local if force_retrieval is None else force_retrieval
        self.workflow = CappedFunctionAgent(
            name="rag_agent", tools=[tool], llm=llm, system_prompt=system_prompt, streaming=False,
            allow_parallel_tool_calls=False, initial_tool_choice=TOOL_NAME if force else None,
            timeout=self.timeout, tools_exhausted=self._tools_exhausted if local else lambda: self.tool.exhausted,
            render_structured=lambda reply: render_structured_answer(reply, self.tool.turn.nodes),
        )
        self.history: list[ChatMessage] = [ChatMessage(role=MessageRole.SYSTEM, content=system_prompt)]
        self.last_turn: Turn | None = None
        # "evidence": the answer's figures are checked against lines selected from the retrieved chunks
        from rag_lab.answer.evidence_answer import resolve_answer_style

        self.answer_style = resolve_answer_style(settings.answer_style, llm)
        self._settings = settings
        self._turn_lock = asyncio.Lock()  # one turn at a time: history and tool state are per agent

    def _tools_exhausted(self) -> bool:
        """Local models answer as soon as the search budget is spent (not after a refused call)."""
        return self.tool.exhausted or len(self.tool.turn.calls) >= self.tool.max_calls

    # --- public API ---------------------------------------------------------------------------
    def chat(self, question: str) -> Answer:
        """Answer ``question`` (sync; safe inside a running event loop, e.g. Jupyter)."""
        try:
            # Backstop: two workflow runs (a grounded turn) plus slack.
            return run_sync(self._turn(question), timeout=2 * self.timeout + 60)
        except concurrent.futures.TimeoutError:
            raise ProviderError(f"agent turn did not finish in {2 * self.timeout + 60:.0f} s",
                                "an LLM call is blocking the event loop; check the provider") from None

    async def achat(self, question: str) -> Answer:
        return await run_async(self._turn(question))

    def query(self, question: str) -> Answer:
        """The evaluation interface (``Answerer``): same as :meth:`chat`, history included."""
        return self.chat(question)

    def reset(self) -> None:
        """Forget the conversation (the system message stays)."""
        self.history = self.history[:1]
        self.last_turn = None

    # --- one turn -----------------------------------------------------------------------------
    async def _turn(self, question: str) -> Answer:
        if not isinstance(question, str) or not question.strip():
            raise ValueError("The question is empty: ask something")
        question = question.strip()
        from rag_lab.models.llm.usage import track_usage

        async with self._turn_lock:
            start = time.perf_counter()
            with track_usage() as usage:
                reply, turn = await self._run(question)
            seconds = time.perf_counter() - start
            parsed = parse_reply(reply)
            self._remember(question, reply.strip() if parsed.usable else parsed.answer)
            text, evidence, citations = parsed.answer, [], []
            if self.answer_style == "evidence" and turn.nodes:
                checked = self._check_figures(parsed.answer, question, turn.nodes)
                text, evidence, citations = checked.text, checked.evidence, checked.figure_citations
            return Answer(
                answer=text,
                cited_sources=reply_sources(parsed, turn.nodes),
                retrieved_sources=unique_sources(turn.nodes),
                mode="agent",
                response_type="agent",
                response_time=seconds,
                usage={k: int(getattr(usage, k, 0)) for k in USAGE_KEYS},
                chunks=[Chunk.from_node(n, r) for n, r in enumerate(turn.nodes, start=1)],
                question=question,
                tool_calls=[{"arguments": call.arguments, "query": call.query, "fallback": call.fallback,
                             "top_k": call.top_k, "docs": call.numbers} for call in turn.calls],
                evidence=[item.to_dict() for item in evidence],
                figure_citations=[c.to_dict() for c in citations],
            )

    def _check_figures(self, answer: str, question: str, nodes):
        from rag_lab.answer.evidence_answer import checked_answer
        from rag_lab.models.embeddings import get_embed_model

        return checked_answer(answer, question, nodes, embed_model=get_embed_model(self._settings))

    async def _run(self, question: str) -> tuple[str, Turn]:
        history = self._prompt_history()
        base = estimate_tokens(f"{self.system_prompt}\n{_text(history)}\n{question}")
        turn = self.tool.start_turn(question, base + self._tool_tokens)
        self.last_turn = turn
        reply = await self._workflow(user_msg=question, chat_history=history)
        if self.ground and not turn.retrieved:
            reply = await self._grounded(question, history)
        if turn.error is not None:
            raise turn.error
        return reply, turn

    async def _grounded(self, question: str, history: list[ChatMessage]) -> str:
        """The grounding guarantee: search the question, then let the model answer from it."""
        result = await asyncio.to_thread(self.tool, query=question)  # a retriever error ends the turn
        call_id = f"call_ground_{len(self.tool.turn.calls)}"
        call = ChatMessage(role=MessageRole.ASSISTANT, blocks=[
            ToolCallBlock(tool_call_id=call_id, tool_name=TOOL_NAME, tool_kwargs={"query": question})])
        output = ChatMessage(role=MessageRole.TOOL, content=result, additional_kwargs={"tool_call_id": call_id})
        user = ChatMessage(role=MessageRole.USER, content=question)
        return await self._workflow(chat_history=[*history, user, call, output])

    async def _workflow(self, **start: Any) -> str:
        memory = ChatMemoryBuffer.from_defaults(token_limit=_NO_TRIM)  # the history window is ours
        try:
            result = await self.workflow.run(memory=memory, max_iterations=self.max_iterations,
                                             early_stopping_method="generate", **start)
        except WorkflowTimeoutError as exc:
            raise ProviderError(f"agent turn timed out after {self.timeout:.0f} s ({exc})",
                                "pass a larger timeout= or fewer max_tool_calls, or use a faster LLM") from None
        return result.response.content or ""

    # --- history ------------------------------------------------------------------------------
    def _prompt_history(self) -> list[ChatMessage]:
        """The window sent with a question: within 1/HISTORY_SHARE of the context window."""
        messages = [m.model_copy() for m in self.history[1:]]
        budget = self.context_window // HISTORY_SHARE
        while messages and estimate_tokens(_text(messages)) > budget:
            messages.pop(0)
        return _from_first_question(messages)

    def _remember(self, question: str, reply: str) -> None:
        self.history += [ChatMessage(role=MessageRole.USER, content=question),
                         ChatMessage(role=MessageRole.ASSISTANT, content=reply)]
        kept = self.history[1:][-self.max_history:] if self.max_history else []
        self.history = self.history[:1] + _from_first_question(kept)


def _from_first_question(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Drop leading replies: a window must start with a question."""
    while messages and messages[0].role != MessageRole.USER:
        messages.pop(0)
    return messages
