"""The ONE evaluation adapter: ``make_answerer(mode, …).query(question) -> Answer`` for every
mode, engines and the agent alike, timed and with the token usage of every LLM call inside.

Adding a mode that is not a query engine (like the agent) = one branch in
:func:`make_answerer` returning an object with ``mode`` and ``query(question) -> Answer``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Protocol

from llama_index.core.base.response.schema import Response
from llama_index.core.llms.llm import LLM

from rag_lab.answer.engine import CitedQueryEngine, build_engine
from rag_lab.answer.prompt import unique_sources
from rag_lab.answer.types import USAGE_KEYS, Answer, Chunk, empty_usage
from rag_lab.config import Settings
from rag_lab.models.llm.usage import track_usage


class Answerer(Protocol):
    mode: str

    def query(self, question: str) -> Answer: ...


@contextmanager
def measured() -> Iterator[dict[str, Any]]:
    """Wall time and token usage of the block: ``{"seconds": float, "usage": dict}``."""
    result: dict[str, Any] = {"seconds": 0.0, "usage": empty_usage()}
    start = time.perf_counter()
    with track_usage() as usage:
        try:
            yield result
        finally:
            result["seconds"] = time.perf_counter() - start
            result["usage"] = {k: int(getattr(usage, k, 0)) for k in USAGE_KEYS}


def response_to_answer(response: Response, question: str, mode: str, seconds: float,
                       usage: dict[str, int]) -> Answer:
    meta = response.metadata or {}
    nodes = list(response.source_nodes)
    return Answer(
        answer=str(response.response or ""),
        cited_sources=list(meta.get("cited_sources", [])),
        retrieved_sources=unique_sources(nodes),
        mode=meta.get("mode", mode),
        response_type=meta.get("response_type", "answer"),
        response_time=seconds,
        usage=usage,
        chunks=[Chunk.from_node(i, r) for i, r in enumerate(nodes, start=1)],
        rerank=meta.get("rerank"),
        question=question,
        timings=dict(meta.get("timings", {})),
        evidence=list(meta.get("evidence", [])),
        figure_citations=list(meta.get("figure_citations", [])),
    )


class AnswerPipeline:
    """A query engine seen through the evaluation interface."""

    def __init__(self, engine: CitedQueryEngine, mode: str | None = None) -> None:
        self.engine = engine
        self.mode = mode or engine.mode

    def query(self, question: str) -> Answer:
        with measured() as m:
            response = self.engine.query(question)
        return response_to_answer(response, question, self.mode, m["seconds"], m["usage"])


class AgentAnswerer:
    """``RagAgent(...).chat(question) -> Answer`` behind the same interface: the adapter owns
    timing and usage so they are measured the same way as for the engines."""

    mode = "agent"

    def __init__(self, chat: Callable[[str], Answer]) -> None:
        self.chat = chat

    def query(self, question: str) -> Answer:
        with measured() as m:
            answer = self.chat(question)
        # The agent runs on its own event loop; should its calls escape this block's tracking,
        # its own count (more calls seen) wins over a zero.
        usage = m["usage"] if m["usage"]["calls"] >= answer.usage.get("calls", 0) else answer.usage
        return replace(answer, mode="agent", response_time=m["seconds"], usage=usage,
                       question=answer.question or question)


def make_answerer(
    mode: str,
    settings: Settings,
    dataset: Any = None,
    *,
    rerank: bool | None = None,
    explain: bool = False,
    llm: LLM | None = None,
    **params: Any,
) -> Answerer:
    """An answerer for ``mode``: dense | bm25 | fusion | hybrid | kendra | agent.

    ``params`` go to :func:`build_engine` (top_k, top_n, retriever, fusion_k, prefetch, …) or, for
    the agent, to ``RagAgent``. ``rerank`` None is the CLI's default (:func:`default_rerank`).
    """
    from rag_lab.retrieve.registry import is_agent

    if is_agent(mode):
        # Lazy: the agent module is optional and heavier (tools, agent workflow). Contract:
        # RagAgent(settings=, dataset=, llm=, **params).chat(question) -> Answer.
        from rag_lab.answer.agent import RagAgent

        agent = RagAgent(settings=settings, dataset=dataset, llm=llm, **params)
        return AgentAnswerer(agent.chat)
    engine = build_engine(mode, settings, dataset, rerank=rerank, explain=explain, llm=llm, **params)
    return AnswerPipeline(engine)
