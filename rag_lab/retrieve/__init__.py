"""Retrieval modes, each a LlamaIndex ``BaseRetriever`` returning ``NodeWithScore``.

The mode names load instantly; the retrievers (and LlamaIndex) load on first use, so the CLI's
``--help`` and argument errors do not pay for them.
"""

from typing import TYPE_CHECKING, Any

from rag_lab.retrieve.modes import ALL_MODES, INDEX_MODES

if TYPE_CHECKING:
    from rag_lab.retrieve.base import REQUIRED_METADATA, LabRetriever
    from rag_lab.retrieve.registry import build_retriever

__all__ = ["ALL_MODES", "INDEX_MODES", "REQUIRED_METADATA", "LabRetriever", "build_retriever"]
_LAZY = {"REQUIRED_METADATA": "rag_lab.retrieve.base", "LabRetriever": "rag_lab.retrieve.base",
         "build_retriever": "rag_lab.retrieve.registry"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
