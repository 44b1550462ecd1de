"""Retrieval modes, each a LlamaIndex ``BaseRetriever`` returning ``NodeWithScore``."""

from rag_lab.retrieve.base import REQUIRED_METADATA, LabRetriever
from rag_lab.retrieve.registry import ALL_MODES, INDEX_MODES, build_retriever

__all__ = ["ALL_MODES", "INDEX_MODES", "REQUIRED_METADATA", "LabRetriever", "build_retriever"]
