"""Retriever registry: a new mode is its module plus one line in :data:`RETRIEVERS`.

Everything that lists the modes reads this table: the CLI's ``--mode`` choices, ``eval``'s and
``ir``'s mode checks, :func:`build_retriever`, and the contract suite (``tests/contracts``), which
runs every registered mode, and each fused mode with its rewrite and year-boost wrappers, through
:func:`build_retriever`. Importing this module is cheap (the CLI's argument parser reads it); the
retrievers load on first use.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag_lab.errors import ConfigError, one_of
from rag_lab.retrieve.configuration import RENAMED, DEFAULTS, RetrievalConfig, check_lever_names, fused_defaults

if TYPE_CHECKING:
    from llama_index.core.base.base_retriever import BaseRetriever

    from rag_lab.config import Settings


@dataclass(frozen=True)
class RetrieverEntry:
    """One retrieval mode: ``target`` is ``"module:Class"`` (imported on first use)."""

    mode: str
    target: str
    #: What ``--help`` says after the mode's name ("" says nothing).
    summary: str = ""
    #: The remote service that indexes its documents itself (built by ``Class.from_settings``);
    #: None: the retriever searches the dataset's index (built by ``Class(index, ...)``).
    service: str | None = None
    #: The two legs it fuses by RRF, as the ablation grid names their candidate lists (dense, then
    #: sparse); a mode with legs takes every fused lever (a :class:`RetrievalConfig`, built as
    #: ``Class(index, config, ...)``), LLM query rewrites (``num_queries``) and the year boost.
    legs: tuple[str, str] | None = None
    #: The engine fuses the legs itself, from its own top-p lists (the grid reads those lists, not the deep ones).
    engine_fuses: bool = False
    #: A service's settings: the one giving its default top-k (every passage it returns reaches the
    #: generator, never reranked: it ranks them itself) and the one naming its index (answer cache keys).
    top_k_setting: str | None = None
    index_setting: str | None = None

    @property
    def needs_index(self) -> bool:
        return self.service is None

    @property
    def fused(self) -> bool:
        """Two legs and RRF: the fused levers, rewrites and the year boost apply."""
        return self.legs is not None

    def load(self) -> type:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)


RETRIEVERS: dict[str, RetrieverEntry] = {entry.mode: entry for entry in (
    RetrieverEntry("dense", "rag_lab.retrieve.dense:DenseRetriever", "embeddings"),
    RetrieverEntry("bm25", "rag_lab.retrieve.bm25:BM25Retriever"),
    RetrieverEntry("fusion", "rag_lab.retrieve.fusion:FusionRetriever", "client-side RRF of dense and bm25",
                   legs=("dense", "bm25")),
    RetrieverEntry("hybrid", "rag_lab.retrieve.hybrid:HybridRetriever", "Qdrant's fused dense + sparse-vector query",
                   legs=("dense", "sparse"), engine_fuses=True),
    RetrieverEntry("kendra", "rag_lab.retrieve.kendra:KendraRetriever", "AWS", service="Kendra",
                   top_k_setting="kendra_top_k", index_setting="kendra_index_id"),
)}
#: The answering mode that is no retriever: a function-calling agent searching one of the modes above.
AGENT = "agent"


def retrieval_modes() -> tuple[str, ...]:
    """Every registered mode, in the table's order."""
    return tuple(RETRIEVERS)


def index_modes() -> tuple[str, ...]:
    """The modes that search the dataset's own index."""
    return tuple(mode for mode, entry in RETRIEVERS.items() if entry.needs_index)


def fused_modes() -> tuple[str, ...]:
    """The modes that take query rewrites and the year boost."""
    return tuple(mode for mode, entry in RETRIEVERS.items() if entry.fused)


def answering_modes() -> tuple[str, ...]:
    """What ``ask`` and ``eval`` answer with: every retrieval mode, and the agent."""
    return (*retrieval_modes(), AGENT)


def is_agent(mode: str) -> bool:
    return mode == AGENT


def mode_legs() -> dict[str, tuple[str, str]]:
    """Each two-leg RRF mode's legs (the modes the ablation grid and ``tune`` compute)."""
    return {mode: entry.legs for mode, entry in RETRIEVERS.items() if entry.legs}


def engine_fuses(mode: str) -> bool:
    """True when the mode's engine fuses its own top-p lists (``hybrid``: Qdrant's prefetch)."""
    entry = RETRIEVERS.get(mode)
    return bool(entry and entry.engine_fuses)


def ranks_itself(mode: str) -> str | None:
    """Why ``mode``'s passages are never reranked (a service ranks them itself), or None."""
    entry = RETRIEVERS.get(mode)
    return f"{mode} ranks internally" if entry is not None and not entry.needs_index else None


def service_top_k(mode: str, settings: Settings) -> int | None:
    """A service mode's default top-k from its settings (None: not a service, the command's default applies)."""
    entry = RETRIEVERS.get(mode)
    return getattr(settings, entry.top_k_setting) if entry is not None and entry.top_k_setting else None


def service_index(mode: str, settings: Settings) -> str | None:
    """What names a service mode's remote index in answer cache keys (``kendra:<index id>``); None for
    the modes over the lab's own index (named by its fingerprint)."""
    entry = RETRIEVERS.get(mode)
    if entry is None or entry.needs_index:
        return None
    return f"{mode}:{getattr(settings, entry.index_setting) if entry.index_setting else ''}"


def needs_dataset(mode: str) -> bool:
    """False for a service mode (it indexes its documents itself), True for the rest, the modes
    the registry does not hold too (the agent searches a dataset's index)."""
    entry = RETRIEVERS.get(mode)
    return entry is None or entry.needs_index


def describe_modes() -> str:
    """``"dense (embeddings), bm25, …"``: the modes for ``--help``."""
    return ", ".join(f"{mode} ({entry.summary})" if entry.summary else mode for mode, entry in RETRIEVERS.items())


# The registry's modes as loaded (parsers and defaults that need a constant; the functions above
# also see entries registered later, e.g. by a test).
ALL_MODES = retrieval_modes()
INDEX_MODES = index_modes()


def registry_entry(mode: str) -> RetrieverEntry:
    try:
        return RETRIEVERS[mode]
    except KeyError:
        raise ConfigError(f"Unknown retrieval mode {mode!r}", f"use one of: {', '.join(retrieval_modes())}") from None


def build_retriever(mode: str, settings: Settings, dataset=None, contextual: str | None = None,
                    config: RetrievalConfig | None = None, **params: Any) -> BaseRetriever:
    """A retriever for ``mode``. Index modes open the dataset's index (``contextual``: that
    variant of it, see ``rag-lab index --contextual``); service modes (kendra) read settings.
    The levers (``config``, and ``params`` named as its fields: ``fusion_k``, ``prefetch`` …; None =
    not given) become one :class:`RetrievalConfig`, which a fused mode's retriever takes whole; the
    other ``params`` (``explain``, ``score_threshold``, ``llm``, a service's ``client``) are options."""
    entry = registry_entry(mode)
    names = {f for f in RetrievalConfig.__dataclass_fields__}
    levers = {k: v for k, v in params.items() if k in names}
    options = {k: v for k, v in params.items() if k not in names}
    check_lever_names({k: v for k, v in options.items() if k in RENAMED})
    given_top_k = levers.get("top_k")
    config = (config or DEFAULTS).with_levers(mode=mode, contextual=contextual, **levers)
    if not entry.fused:
        _warn_ignored(entry, {k: v for k, v in levers.items() if v is not None and k in fused_defaults()})
    if not entry.needs_index:
        if config.contextual not in (None, "none"):
            raise ConfigError(f"{entry.service} indexes its documents itself: there is no contextual "
                              f"{entry.service} variant", f"use --contextual with {one_of(index_modes())}")
        cls = entry.load()
        given = {**options, **({"top_k": given_top_k} if given_top_k is not None else {})}
        return cls.from_settings(settings, **_accepted(cls.from_settings, given))
    cls = entry.load()
    from rag_lab.index import CorpusIndex

    if dataset is None:
        raise ConfigError(f"Mode {mode!r} needs a dataset", "pass a dataset name or folder")
    index = CorpusIndex.open(dataset, settings, config.contextual)
    llm = options.pop("llm", None)
    if not entry.fused:  # one leg: no RRF levers, rewrites or year boost (eval runs every mode)
        return cls(index, top_k=config.top_k, **_accepted(cls, options))
    if config.year_boost:  # the versions a question names (rag_lab.retrieve.year_match)
        from rag_lab.retrieve.year_match import POOL, YearBoostRetriever

        wide = _fused(cls, index, config.with_levers(top_k=max(config.top_k, POOL)), options, llm, settings)
        return YearBoostRetriever(wide, config.year_boost, config.top_k)  # re-ranked, then cut
    return _fused(cls, index, config, options, llm, settings)





def _fused(cls: type, index, config: RetrievalConfig, options: dict[str, Any], llm, settings: Settings
           ) -> BaseRetriever:
    """``cls`` over ``index`` with ``config``; with ``config.num_queries`` > 1 wrapped to search with
    LLM rewrites too (:mod:`rag_lab.retrieve.rewrites`; ``llm`` defaults to the settings' generator)."""
    retriever = cls(index, config, **_accepted(cls, options))
    if int(config.num_queries or 1) < 2:
        return retriever
    from rag_lab.retrieve.rewrites import RewriteFusionRetriever

    if llm is None:
        from rag_lab.models.llm import get_llm

        llm = get_llm(settings)
    return RewriteFusionRetriever(retriever, llm, int(config.num_queries), config.top_k)


def _warn_ignored(entry: RetrieverEntry, ignored: dict[str, Any]) -> None:
    """A fused lever given to a mode that does not take it is named in a warning (``--fusion-k`` for
    bm25 would otherwise be dropped without a word)."""
    if not ignored:
        return
    from rag_lab.errors import RagLabWarning, warn_at_caller

    warn_at_caller(RagLabWarning(f"{entry.mode} takes no {', '.join(ignored)}: ignored (fusion and hybrid take the "
                                "fused levers)"))


def _accepted(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """The options (not None) that this retriever's constructor takes by name."""
    names = inspect.signature(cls).parameters
    return {k: v for k, v in options.items() if v is not None and k in names}
