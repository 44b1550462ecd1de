"""rag-lab."""

from rag_lab.progress import quiet_library_progress
from rag_lab.tokenizer_cache import pin_tiktoken_cache

quiet_library_progress()
pin_tiktoken_cache()
