"""One LlamaIndex query engine per retrieval mode: retrieve → (rerank) → cited answer.

Every mode (dense, bm25, fusion, hybrid, kendra) answers through the same
:class:`CitedQueryEngine`, the same prompt and the same citation parsing; only the retriever
differs, so answer quality differences come from retrieval alone.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.response.schema import Response
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms.llm import LLM
from llama_index.core.postprocessor import LLMRerank
from llama_index.core.prompts import BasePromptTemplate
from llama_index.core.query_engine import CustomQueryEngine

from rag_lab.answer.compress import compress_nodes
from rag_lab.answer.context import build_context
from rag_lab.answer.evidence import DEFAULT_EVIDENCE_UNITS
from rag_lab.answer.prompt import (
    ANSWER_JSON_PROMPT,
    ANSWER_PROMPT,
    ANSWER_SCHEMA,
    NO_ANSWER,
    extract_sources,
    render_structured_answer,
)
from rag_lab.answer.rerank import DEFAULT_TOP_N, make_reranker, rerank_nodes
from rag_lab.answer.types import RerankInfo, Source
from rag_lab.answer.years import program_years_note
from rag_lab.config import Settings
from rag_lab.errors import ConfigError

DEFAULT_TOP_K = 30  # candidates retrieved; the reranker (or the retrieval order) keeps top_n


def default_rerank(settings: Settings) -> bool:
    """Whether to LLM-rerank when the caller does not say (``rerank=None``; the CLI's ``--rerank`` /
    ``--no-rerank`` unset): on with a remote provider, off with the local model — its constrained
    listwise rerank parses, but costs a second long prompt on CPU and, measured by
    benchmarks/rerank_quality.py, ranks worse than the retrieval order. One rule for the CLI, the
    Python API, the evaluation runner and the notebooks."""
    return not settings.llm_is_local


class CitedQueryEngine(CustomQueryEngine):
    """Retrieve ``top_k``, keep ``top_n`` (LLM rerank or retrieval order), answer with citations.

    The ``Response`` carries the chunks given to the LLM as ``source_nodes`` (prompt order, so
    ``source_nodes[N-1]`` is ``[Doc N]``) and ``metadata``: ``mode``, ``response_type``
    ("answer" | "no_results"), ``cited_sources`` (list of Source, empty when nothing is cited),
    ``rerank`` (RerankInfo),
    ``candidates`` (chunks retrieved).
    """

    retriever: BaseRetriever
    llm: LLM
    mode: str
    reranker: LLMRerank | None = None
    rerank_skip_reason: str = "disabled"
    top_n: int = Field(default=DEFAULT_TOP_N, ge=1)
    # None: the shared prompt, ANSWER_JSON_PROMPT for an LLM with constrained output. (Not a default
    # of ANSWER_PROMPT compared by identity: pydantic copies field defaults, so it never matched.)
    prompt: BasePromptTemplate | None = None
    # JSON-constrained answers ({"answer", "cited"}) for LLMs that support it (the local models);
    # None: decided by the LLM's ``supports_constrained_output``.
    structured: bool | None = None
    # Keep only the chunks' lines that matter to the question (None: whole chunks).
    context_lines: int | None = Field(default=None, ge=1)
    # "evidence": answer from a few selected lines, figures checked (rag_lab.answer.evidence_answer);
    # "free": the chunks (or their compression) and a free-form answer.
    answer_style: str = "free"
    evidence_units: int = Field(default=DEFAULT_EVIDENCE_UNITS, ge=1)
    embed_model: Any = None  # scores the evidence lines beside BM25 (the retriever's model); None: BM25 only

    @property
    def uses_structured_output(self) -> bool:
        if self.structured is not None:
            return self.structured
        return bool(getattr(self.llm, "supports_constrained_output", False))

    def custom_query(self, query_str: str) -> Response:
        clock = time.perf_counter()
        timings: dict[str, float] = {}

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[stage] = now - clock
            clock = now

        nodes = self.retriever.retrieve(query_str)
        lap("retrieve")
        if not nodes:
            # Nothing to ground an answer in: a fixed answer, and no LLM call to pay for.
            info = RerankInfo("skipped", 0, 0, 0, "no results")
            return Response(NO_ANSWER, source_nodes=[],
                            metadata=self._metadata("no_results", [], info, 0) | {"timings": timings})
        kept, info = rerank_nodes(nodes, query_str, self.reranker, self.top_n, self.rerank_skip_reason)
        lap("rerank")
        if self.answer_style == "evidence":
            return self._evidence_response(query_str, kept, info, len(nodes), timings, lap)
        compression = None
        if self.context_lines:
            kept, compression = compress_nodes(kept, query_str, self.context_lines)
        structured = self.uses_structured_output
        prompt = self.prompt or (ANSWER_JSON_PROMPT if structured else ANSWER_PROMPT)
        # two program years in the chunks, none in the question: the model is asked to name each (answer/years.py)
        note = program_years_note(query_str, kept)
        context, used = build_context(kept, self.llm, _with_note(query_str, note), prompt)
        if used < len(kept):
            info.reason = (info.reason + "; " if info.reason else "") + (
                f"context window fits {used} of {len(kept)} chunks")
            kept = kept[:used]
            info.kept = used
            note = program_years_note(query_str, kept)  # fewer chunks: a shorter note or none, within the budget
        asked = _with_note(query_str, note)
        if structured:
            reply = self.llm.complete(prompt.format(context_str=context, query_str=asked),
                                      json_schema=ANSWER_SCHEMA).text
            text = render_structured_answer(reply, kept)
        else:
            text = self.llm.predict(prompt, context_str=context, query_str=asked).strip()
        lap("generate")
        sources = extract_sources(text, kept)
        extra = ({"timings": timings} | ({"compression": asdict(compression)} if compression else {})
                 | ({"years_note": note} if note else {}))
        return Response(text, source_nodes=kept, metadata=self._metadata("answer", sources, info, len(nodes)) | extra)

    def _evidence_response(self, query_str: str, kept: list, info: RerankInfo, candidates: int,
                           timings: dict[str, float], lap) -> Response:
        from rag_lab.answer.evidence_answer import answer_from_evidence

        result = answer_from_evidence(self.llm, query_str, kept, embed_model=self.embed_model,
                                      max_units=self.evidence_units, structured=self.uses_structured_output)
        lap("generate")
        extra = {"timings": timings, "evidence": [item.to_dict() for item in result.evidence],
                 "figure_citations": [c.to_dict() for c in result.figure_citations],
                 "answer_rebuilt": result.rebuilt}
        sources = extract_sources(result.text, kept)
        return Response(result.text, source_nodes=kept,
                        metadata=self._metadata("answer", sources, info, candidates) | extra)

    def _metadata(self, response_type: str, sources: list[Source], info: RerankInfo,
                  candidates: int) -> dict[str, Any]:
        return {"mode": self.mode, "response_type": response_type, "cited_sources": sources,
                "rerank": info, "candidates": candidates}


def _with_note(query: str, note: str | None) -> str:
    return f"{query}\n{note}" if note else query


def build_engine(
    mode: str,
    settings: Settings,
    dataset: Any = None,
    rerank: bool | None = None,
    explain: bool = False,
    llm: LLM | None = None,
    *,
    top_k: int | None = None,
    top_n: int | None = None,
    retriever: BaseRetriever | None = None,
    answer_style: str | None = None,
    **retrieval_params: Any,
) -> CitedQueryEngine:
    """The query engine for ``mode`` (dense | bm25 | fusion | hybrid | kendra).

    ``retrieval_params`` go to the retriever registry (fusion_k, prefetch, weights, Kendra's
    ``client`` …); ``retriever`` replaces the registry's (e.g. a stubbed Kendra in tests); ``llm``
    defaults to ``get_llm(settings)``. ``answer_style`` ("evidence" | "free") overrides the settings'
    (:attr:`~rag_lab.config.Settings.resolved_answer_style`). ``explain`` makes hybrid attach its fusion explanation
    (fusion always does).

    Index modes retrieve ``top_k`` (default 30) and keep ``top_n`` (default 7, LLM rerank or
    retrieval order; ``rerank`` None: :func:`default_rerank`). Kendra follows the seed: its Retrieve API's top ``KENDRA_TOP_K`` (default 5)
    passages, never reranked, all of them straight to the shared generator.
    """
    from rag_lab.retrieve.registry import is_agent, needs_dataset, ranks_itself, service_top_k

    if is_agent(mode):
        raise ConfigError("The agent is not a query engine", "use make_answerer(mode='agent', …)")
    if (own_top_k := service_top_k(mode, settings)) is not None:  # a service: its passages all reach the generator
        top_k = own_top_k if top_k is None else top_k
        top_n = top_k if top_n is None else top_n
    else:
        top_k = DEFAULT_TOP_K if top_k is None else top_k
        top_n = DEFAULT_TOP_N if top_n is None else top_n
    if retriever is None:
        # The retriever first: a missing index or Kendra config fails before the LLM loads.
        from rag_lab.retrieve import build_retriever

        if (retrieval_params.get("num_queries") or 1) > 1 and llm is not None:
            retrieval_params["llm"] = llm  # the query rewrites come from the engine's LLM
        retriever = build_retriever(mode, settings, dataset, top_k=top_k, explain=explain or None,
                                    **retrieval_params)
    if llm is None:
        from rag_lab.models.llm import get_llm

        llm = get_llm(settings)
    rerank = default_rerank(settings) if rerank is None else rerank
    skip_reason = ranks_itself(mode) or "disabled"
    reranker = make_reranker(llm, top_n=top_n) if rerank and not ranks_itself(mode) else None
    from rag_lab.answer.evidence_answer import resolve_answer_style

    style = resolve_answer_style(answer_style or settings.answer_style, llm)
    embed_model = None
    if style == "evidence" and needs_dataset(mode):  # a service's passages are not the lab's chunks
        from rag_lab.models.embeddings import get_embed_model

        embed_model = get_embed_model(settings)  # the retriever's model, loaded once per process
    return CitedQueryEngine(retriever=retriever, llm=llm, mode=mode, reranker=reranker,
                            rerank_skip_reason=skip_reason, top_n=top_n, context_lines=settings.context_lines,
                            answer_style=style, embed_model=embed_model)
