"""Retriever registry: a new mode is one file plus one line here (the contract suite picks it up)."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from llama_index.core.base.base_retriever import BaseRetriever

from rag_lab.config import Settings
from rag_lab.errors import ConfigError

from rag_lab.retrieve.levers import constructor_params
from rag_lab.retrieve.modes import ALL_MODES, INDEX_MODES  # noqa: F401  (re-exported)


def _factory(mode: str) -> Callable[..., BaseRetriever]:
    if mode == "dense":
        from rag_lab.retrieve.dense import DenseRetriever as cls
    elif mode == "bm25":
        from rag_lab.retrieve.bm25 import BM25Retriever as cls
    elif mode == "fusion":
        from rag_lab.retrieve.fusion import FusionRetriever as cls
    elif mode == "hybrid":
        from rag_lab.retrieve.hybrid import HybridRetriever as cls
    else:
        raise ConfigError(f"Unknown retrieval mode {mode!r}", f"use one of: {', '.join(ALL_MODES)}")
    return cls


def build_retriever(mode: str, settings: Settings, dataset=None, contextual: str | None = None,
                    **params: Any) -> BaseRetriever:
    """A retriever for ``mode``. Index modes open the dataset's index (``contextual``: that
    variant of it, see ``rag-lab index --contextual``); kendra reads settings. ``params`` use the
    levers' names (``fusion_k``, prefetch …: :mod:`rag_lab.retrieve.levers`)."""
    params = constructor_params(params)
    if mode == "kendra":
        if contextual not in (None, "none"):
            raise ConfigError("Kendra indexes its documents itself: there is no contextual Kendra variant",
                              "use --contextual with dense, bm25, fusion or hybrid")
        from rag_lab.retrieve.kendra import KendraRetriever

        return KendraRetriever.from_settings(settings, **_accepted(KendraRetriever.from_settings, params))
    cls = _factory(mode)
    from rag_lab.index import CorpusIndex

    if dataset is None:
        raise ConfigError(f"Mode {mode!r} needs a dataset", "pass a dataset name or folder")
    index = CorpusIndex.open(dataset, settings, contextual)
    year_boost = params.pop("year_boost", None)
    num_queries = int(params.pop("num_queries", None) or 1)
    llm = params.pop("llm", None)
    if mode not in ("fusion", "hybrid"):  # rewrites are the fused modes' lever, like fusion_k (eval runs every mode)
        num_queries = 1
    if year_boost and mode in ("fusion", "hybrid"):  # the versions a question names (rag_lab.retrieve.year_match)
        from rag_lab.retrieve.year_match import POOL, YearBoostRetriever

        top_k = params.get("top_k") or 10
        wide = _fused(cls, index, {**params, "top_k": max(top_k, POOL)}, num_queries, llm, settings)  # re-ranked, then cut
        return YearBoostRetriever(wide, year_boost, top_k)
    return _fused(cls, index, params, num_queries, llm, settings)


def _fused(cls: type, index, params: dict[str, Any], num_queries: int, llm, settings: Settings) -> BaseRetriever:
    """``cls`` over ``index``; with ``num_queries`` > 1 wrapped to search with LLM rewrites too
    (:mod:`rag_lab.retrieve.rewrites`; ``llm`` defaults to the settings' generator)."""
    retriever = cls(index, **_accepted(cls, params))
    if num_queries < 2:
        return retriever
    from rag_lab.retrieve.rewrites import RewriteFusionRetriever

    if llm is None:
        from rag_lab.models.llm import get_llm

        llm = get_llm(settings)
    return RewriteFusionRetriever(retriever, llm, num_queries, params.get("top_k") or 10)


def _accepted(cls: type, params: dict[str, Any]) -> dict[str, Any]:
    """The subset of shared CLI/ablation parameters that this retriever takes."""
    names = inspect.signature(cls).parameters
    return {k: v for k, v in params.items() if v is not None and k in names}
