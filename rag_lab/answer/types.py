"""What every answering mode returns: one ``Answer``, the unit the evaluation compares."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from llama_index.core.schema import NodeWithScore

ResponseType = Literal["answer", "no_results", "agent"]
RerankStatus = Literal["applied", "failed", "skipped"]

# Token-usage keys reported for every answer (zeros when no LLM was called).
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "calls", "calls_without_usage")


def empty_usage() -> dict[str, int]:
    return dict.fromkeys(USAGE_KEYS, 0)


@dataclass(frozen=True)
class Source:
    """A cited document: file name, page (None when unknown) and URL (when the corpus has one)."""

    doc: str
    page: int | None = None
    url: str | None = None

    @classmethod
    def from_node(cls, result: NodeWithScore) -> Source:
        meta = result.node.metadata
        return cls(doc=str(meta.get("filename") or meta.get("doc_id") or "unknown"),
                   page=meta.get("page"), url=meta.get("source_url"))


@dataclass
class Chunk:
    """One chunk given to the LLM, in prompt order (rank 1 = ``[Doc 1]``)."""

    rank: int
    score: float | None  # the retriever's score (rerank never overwrites it)
    doc_id: str | None
    filename: str | None
    page: int | None
    text: str
    explanation: dict[str, Any] | None = None  # fusion/hybrid: both legs' ranks and RRF terms
    rerank_score: float | None = None  # the LLM's 1-10 relevance when reranked and picked

    @classmethod
    def from_node(cls, rank: int, result: NodeWithScore) -> Chunk:
        # Same record as `rag-lab search --json`, so answers and searches line up field by field.
        from rag_lab.retrieve.records import result_record

        record = result_record(rank, result, include_explanation=True)
        return cls(**{"explanation": None, **record}, rerank_score=result.node.metadata.get("rerank_score"))


@dataclass
class RerankInfo:
    """What the reranker did, so a skipped or failed rerank is never mistaken for a done one."""

    status: RerankStatus
    candidates: int = 0  # chunks the retriever returned
    kept: int = 0  # chunks given to the LLM
    picked: int = 0  # of those, chosen by the reranking LLM (the rest fill up in retrieval order)
    reason: str | None = None  # why skipped/failed

    def describe(self) -> str:
        if self.status == "applied":
            filled = f" ({self.kept - self.picked} filled in retrieval order)" if self.kept > self.picked else ""
            return f"reranked: kept {self.kept} of {self.candidates}{filled}"
        return f"rerank {self.status}: {self.reason}; kept top {self.kept} of {self.candidates} by retrieval order"


@dataclass
class Answer:
    """One answer. ``cited_sources``: what the answer cites (empty when it cites nothing);
    ``retrieved_sources``: every document given to the LLM; ``sources``: the cited ones, or the
    retrieved ones when nothing is cited (check ``cites`` before calling an answer grounded)."""

    answer: str
    cited_sources: list[Source]
    retrieved_sources: list[Source]
    mode: str
    response_type: str = "answer"
    response_time: float = 0.0  # seconds, retrieval + rerank + generation
    usage: dict[str, int] = field(default_factory=empty_usage)
    chunks: list[Chunk] = field(default_factory=list)
    rerank: RerankInfo | None = None
    question: str = ""
    # seconds per stage: retrieve, rerank, generate (engines; the agent reports its total only)
    timings: dict[str, float] = field(default_factory=dict)
    # the agent's retrieve_context calls: the model's arguments and what was run
    # ({"arguments", "query", "fallback", "top_k", "docs"}); empty for the engines
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    # answer_style "evidence": the selected evidence units ({"doc", "first_line", "last_line", "text",
    # "score"}, [Doc N] = doc) and each figure of the answer with the line it came from
    evidence: list[dict[str, Any]] = field(default_factory=list)
    figure_citations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def cites(self) -> bool:
        return bool(self.cited_sources)

    @property
    def sources(self) -> list[Source]:
        return self.cited_sources or self.retrieved_sources

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (plain dicts, lists, str, numbers, None), ``sources`` and ``cites`` included."""
        data = asdict(self)
        data["sources"] = [asdict(s) for s in self.sources]
        data["cites"] = self.cites
        return data
