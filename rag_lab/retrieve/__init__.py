"""Retrieval modes, each a LlamaIndex ``BaseRetriever`` returning ``NodeWithScore``.

The registry (mode names, :func:`build_retriever`) loads instantly; the retrievers (and LlamaIndex)
load on first use, so the CLI's ``--help`` and argument errors do not pay for them.
"""

from typing import TYPE_CHECKING, Any

from rag_lab.retrieve.registry import ALL_MODES, INDEX_MODES, build_retriever, index_modes, retrieval_modes

if TYPE_CHECKING:
    from rag_lab.retrieve.base import REQUIRED_METADATA, LabRetriever

__all__ = ["ALL_MODES", "INDEX_MODES", "REQUIRED_METADATA", "LabRetriever", "build_retriever", "index_modes",
           "retrieval_modes"]
_LAZY = {"REQUIRED_METADATA": "rag_lab.retrieve.base", "LabRetriever": "rag_lab.retrieve.base"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
