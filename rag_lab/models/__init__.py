"""Models: the only place that knows which provider is which (local | openai | groq | bedrock)."""

from rag_lab.models.embeddings import embed_model_id, get_embed_model

__all__ = ["embed_model_id", "get_embed_model"]
