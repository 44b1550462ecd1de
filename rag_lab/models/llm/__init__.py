"""LLM providers (one row each in :data:`rag_lab.config.LLM_PROVIDERS`) behind one factory, plus token accounting."""

from rag_lab.models.llm.factory import get_llm, resolve_model
from rag_lab.models.llm.usage import TokenUsage, track_usage

__all__ = ["TokenUsage", "get_llm", "resolve_model", "track_usage"]
