"""rag-lab."""

import importlib.util
import os

from rag_lab.progress import quiet_library_progress


def pin_tiktoken_cache() -> None:
    """Set LlamaIndex's tiktoken cache folder for the whole process (a user's own value wins).

    LlamaIndex's first ``get_tokenizer()`` call sets ``TIKTOKEN_CACHE_DIR`` for itself and deletes it
    afterwards; two threads making that first call at once (a Ray actor answering samples concurrently)
    both delete it, and one raises ``KeyError: 'TIKTOKEN_CACHE_DIR'`` out of its sample. With the
    variable already set, LlamaIndex neither sets nor deletes it."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return
    spec = importlib.util.find_spec("llama_index.core")  # imports only the namespace package, not the core
    if spec is not None and spec.submodule_search_locations:
        os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(spec.submodule_search_locations[0], "_static", "tiktoken_cache")


quiet_library_progress()
pin_tiktoken_cache()
