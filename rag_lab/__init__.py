"""rag-lab."""

import os
import sys

from rag_lab.progress import quiet_library_progress


def pin_tiktoken_cache() -> None:
    """Set LlamaIndex's tiktoken cache folder for the whole process (a user's own value wins).

    LlamaIndex's first ``get_tokenizer()`` call sets ``TIKTOKEN_CACHE_DIR`` for itself and deletes it
    afterwards; two threads making that first call at once (a Ray actor answering samples concurrently)
    both delete it, and one raises ``KeyError: 'TIKTOKEN_CACHE_DIR'`` out of its sample. With the
    variable already set, LlamaIndex neither sets nor deletes it."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return
    for entry in sys.path:  # found on the path, not imported: `rag-lab --help` imports no library
        folder = os.path.join(entry or ".", "llama_index", "core", "_static", "tiktoken_cache")
        if os.path.isdir(folder):
            os.environ["TIKTOKEN_CACHE_DIR"] = folder
            return


quiet_library_progress()
pin_tiktoken_cache()
