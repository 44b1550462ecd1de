"""rag-lab."""
