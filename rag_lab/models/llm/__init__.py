"""LLM providers (local | openai | groq | bedrock) behind one factory, plus token accounting."""

from rag_lab.models.llm.factory import DEFAULT_AGENT_MODELS, get_llm, resolve_model
from rag_lab.models.llm.usage import TokenUsage, track_usage

__all__ = ["DEFAULT_AGENT_MODELS", "TokenUsage", "get_llm", "resolve_model", "track_usage"]
