"""The agent's one tool, ``retrieve_context``: validated arguments, numbered chunks, a per-turn cap.

Small models fill tool arguments with junk (``{"query": "search_docs"}``), so every argument is
checked: an unusable query is replaced by the user's question, ``top_k`` is clamped to 1..20 and
a bad ``threshold`` is ignored. Chunks are numbered across all calls of one turn (a chunk seen
again keeps its number), so ``[Doc N]`` in the final reply always means the same chunk, and the
chunks shown are recorded for the answer's sources. Each result is cut to what is left of the
LLM's context window (a 500-word table chunk costs a small local model ~1,500 tokens).
"""

from __future__ import annotations

import html
import json
import math
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.bridge.pydantic import BaseModel, Field
from llama_index.core.schema import NodeWithScore
from llama_index.core.tools import FunctionTool

from rag_lab.answer.context import MIN_PARTIAL_TOKENS, estimate_tokens
from rag_lab.answer.compress import compress_nodes
from rag_lab.answer.prompt import NO_ANSWER, doc_header, format_chunk

TOOL_NAME = "retrieve_context"
TOOL_DESCRIPTION = (
    "Search the document collection. Returns numbered chunks headed [Doc N: filename, Page X]; "
    "cite them as [Doc N]."
)
DEFAULT_TOP_K = 5
MAX_TOP_K = 20
MIN_QUERY_CHARS = 3
# Prompt tokens a tool spec costs beyond its parameter schema (llama.cpp's function-calling
# preamble; measured: system + question + schema = 467 SmolLM2 tokens, estimated 533).
TOOL_PREAMBLE_TOKENS = 100
CALL_OVERHEAD_TOKENS = 40  # the assistant's tool-call message and the result's role markers
MARGIN_TOKENS = 64

# What a confused model sends instead of a query (compared lower-case, '_'/'-' as spaces).
PLACEHOLDERS = frozenset({
    "query", "queries", "q", "search", "search query", "search docs", "search documents", "search doc",
    "retrieve", "retrieve context", "context", "string", "str", "text", "question", "user question",
    "your query", "the query", "user query", "keywords", "keyword", "input", "value", "value1", "arg1",
    "example", "none", "null", "undefined", "nan", "functions", "function", "tool", "...", "…",
})
_WRAPPERS = " \t\r\n'\"`<>{}[]()"


class RetrieveContextArgs(BaseModel):
    """The schema the LLM sees (the function itself accepts anything and validates)."""

    query: str = Field(description="What to search for: keywords or a question.")
    top_k: int = Field(default=DEFAULT_TOP_K, description="How many chunks to return (1-20).")
    threshold: float | None = Field(default=None, description="Optional minimum relevance score; usually omit.")


def clean_query(value: Any, question: str) -> tuple[str, bool]:
    """(query to run, True when the model's query was unusable and the question is used)."""
    if isinstance(value, str):
        text = " ".join(html.unescape(value).split())  # llama.cpp's template HTML-escapes quotes
        if " " not in text and "_" in text:
            text = text.replace("_", " ")  # "max_income_2026": BM25 needs the words apart
        key = re.sub(r"[\s_\-]+", " ", text.strip(_WRAPPERS).lower()).strip()
        junk = (
            len(key) < MIN_QUERY_CHARS
            or key in PLACEHOLDERS
            or TOOL_NAME.replace("_", " ") in key
            or key.startswith("functions.")
            or text[:1] in "{["  # a JSON object/array where a string belongs
            or not any(ch.isalnum() for ch in key)
        )
        if not junk:
            return text, False
    return question, True


def clamp_top_k(value: Any, default: int = DEFAULT_TOP_K) -> int:
    if isinstance(value, bool):
        return default
    try:
        number = int(float(value))  # 5, "5", 5.0
    except (TypeError, ValueError, OverflowError):
        return default
    return min(MAX_TOP_K, max(1, number))


def clean_threshold(value: Any) -> float | None:
    """A usable minimum score, or None (missing, not a number, NaN/inf, ≤ 0)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        threshold = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: a 400-digit integer (seen from Qwen 0.5B)
        return None
    return threshold if math.isfinite(threshold) and threshold > 0 else None


@dataclass
class ToolCall:
    """One ``retrieve_context`` call as the model made it and as it was run."""

    arguments: dict[str, Any]
    query: str | None = None  # None: refused (over the cap)
    fallback: bool = False  # the model's query was unusable; the question was searched
    top_k: int = DEFAULT_TOP_K
    threshold: float | None = None
    numbers: list[int] = field(default_factory=list)  # [Doc N] numbers shown in the result
    result: str = ""
    error: Exception | None = None  # the retriever failed (the agent re-raises it, see Turn.error)


@dataclass
class Turn:
    """What one question's tool calls retrieved: ``nodes[N-1]`` is ``[Doc N]``."""

    question: str
    base_tokens: int = 0  # estimated prompt tokens before any tool result
    nodes: list[NodeWithScore] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    used_tokens: int = 0  # tool calls and results so far

    @property
    def retrieved(self) -> bool:
        """At least one search was run (even one that found nothing)."""
        return any(c.query is not None for c in self.calls)

    @property
    def error(self) -> Exception | None:
        """The retriever's error when every search failed: the turn must fail, not answer
        "couldn't find" (FunctionAgent hands tool exceptions to the model as text)."""
        runs = [c for c in self.calls if c.query is not None]
        return runs[0].error if runs and all(c.error is not None for c in runs) else None


class RetrievalTool:
    """``retrieve_context`` over ``retriever`` with per-turn state (one turn at a time)."""

    def __init__(self, retriever: BaseRetriever, *, max_calls: int = 3, default_top_k: int = DEFAULT_TOP_K,
                 context_window: int | None = None, reserve_tokens: int = 512,
                 context_lines: int | None = None) -> None:
        if max_calls < 1:
            raise ValueError(f"max_tool_calls must be ≥ 1, got {max_calls}")
        self.retriever = retriever
        self.max_calls = max_calls
        self.default_top_k = clamp_top_k(default_top_k)
        self.context_window = context_window
        self.reserve_tokens = reserve_tokens
        self.context_lines = context_lines  # compress results to these lines (rag_lab.answer.compress)
        self.turn = Turn("")
        self._lock = threading.Lock()  # the tool runs in executor threads

    def start_turn(self, question: str, base_tokens: int = 0) -> Turn:
        self.turn = Turn(question, base_tokens=base_tokens)
        return self.turn

    @property
    def exhausted(self) -> bool:
        """The model was told to stop searching and asked again: no more tool offers this turn."""
        return len(self.turn.calls) > self.max_calls

    def as_tool(self) -> FunctionTool:
        return FunctionTool.from_defaults(fn=self.__call__, name=TOOL_NAME, description=TOOL_DESCRIPTION,
                                          fn_schema=RetrieveContextArgs)

    def __call__(self, **arguments: Any) -> str:
        turn = self.turn
        with self._lock:
            call = ToolCall(arguments=dict(arguments))
            turn.calls.append(call)
            if len(turn.calls) > self.max_calls:
                call.result = (f"Search limit reached ({self.max_calls} per question). Do not call {TOOL_NAME} "
                               "again: answer now from the documents already retrieved, in the ANSWER/SOURCES "
                               f"format, or reply {NO_ANSWER}.")
                return call.result
        call.query, call.fallback = clean_query(arguments.get("query"), turn.question)
        call.top_k = clamp_top_k(arguments.get("top_k", self.default_top_k), self.default_top_k)
        call.threshold = clean_threshold(arguments.get("threshold"))
        try:
            results = self.retriever.retrieve(call.query)  # outside the lock: retrieval is slow
        except Exception as exc:
            call.error = exc
            raise
        with self._lock:
            results = self._select(results, call)
            if self.context_lines and results:
                # The lines that matter to the search AND to the user's question (a model's query
                # such as "bi-weekly income" matches every row of a table).
                results, _ = compress_nodes(results, f"{self.turn.question}\n{call.query}", self.context_lines)
            call.result = self._render(call, results)
        return call.result

    @staticmethod
    def _select(results: list[NodeWithScore], call: ToolCall) -> list[NodeWithScore]:
        results = results[: call.top_k]
        if call.threshold is not None:
            kept = [r for r in results if r.score is not None and r.score >= call.threshold]
            # Scores are mode-specific (RRF ≤ 0.033, cosine ≤ 1, BM25 unbounded): a model cannot
            # know the scale, so a threshold that would drop everything is ignored.
            if kept:
                return kept
            call.threshold = None
        return results

    def _budget(self) -> int | None:
        if self.context_window is None:
            return None
        turn = self.turn
        return (self.context_window - self.reserve_tokens - MARGIN_TOKENS - turn.base_tokens - turn.used_tokens
                - CALL_OVERHEAD_TOKENS)

    def _render(self, call: ToolCall, results: list[NodeWithScore]) -> str:
        turn = self.turn
        searched = "the user's question" if call.fallback else "query"
        head = f"Results for {searched} {json.dumps(call.query, ensure_ascii=False)}"
        if not results:
            text = f"{head}: no documents found. If nothing relevant can be found, answer: {NO_ANSWER}."
            turn.used_tokens += estimate_tokens(text) + CALL_OVERHEAD_TOKENS
            return text
        budget = self._budget()
        left = None if budget is None else budget - estimate_tokens(head) - 8
        numbers = {r.node.node_id: n for n, r in enumerate(turn.nodes, start=1)}
        blocks: list[str] = []
        for result in results:
            number = numbers.get(result.node.node_id)
            block = (f"{doc_header(number, result)} (already retrieved above)" if number
                     else format_chunk(len(turn.nodes) + 1, result))
            if left is not None:
                cost = estimate_tokens(block) + 1
                if cost > left:
                    # Cut the chunk to what is left, like the engines do; the first one always goes in.
                    if left < MIN_PARTIAL_TOKENS and blocks:
                        break
                    keep = max(block.find("\n") + 1, int(len(block) * max(left, 0) / cost))  # header stays
                    block = block[:keep].rstrip() + " …"
                    left = 0
                else:
                    left -= cost
            if number is None:
                turn.nodes.append(result)
                number = len(turn.nodes)
            call.numbers.append(number)
            blocks.append(block)
            if left == 0:
                break
        text = f"{head} (cite as [Doc N]):\n\n" + "\n\n".join(blocks)
        turn.used_tokens += estimate_tokens(text) + CALL_OVERHEAD_TOKENS
        return text
