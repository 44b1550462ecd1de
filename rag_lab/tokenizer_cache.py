"""LlamaIndex's tiktoken cache folder, set once for the whole process.

LlamaIndex's first ``get_tokenizer()`` call sets ``TIKTOKEN_CACHE_DIR`` for itself and deletes it
afterwards. Two threads making that first call at once (a Ray actor answering samples concurrently)
both delete it, and one raises ``KeyError: 'TIKTOKEN_CACHE_DIR'`` out of the sample. With the variable
already set, LlamaIndex neither sets nor deletes it. A user's own value wins.
"""

from __future__ import annotations

import importlib.util
import os


def pin_tiktoken_cache() -> None:
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return
    spec = importlib.util.find_spec("llama_index.core")  # imports only the namespace package, not the core
    if spec is None or not spec.submodule_search_locations:
        return
    os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(spec.submodule_search_locations[0], "_static", "tiktoken_cache")
