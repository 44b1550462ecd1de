"""The one key of a question in the per-question caches (IR checkpoints, the ablation's leg cache).

A question is keyed by its text, hashed — never by its id: ids default to ``line-N`` and shift
when a line is inserted into qa.jsonl. Everything else that shapes a cached ranking (index build,
vector engine, mode, parameters, depth, tie rule) belongs to the cache file, not to its entries.
"""

from __future__ import annotations

import hashlib


def question_key(text: str) -> str:
    """A cache entry's key: the question's text, hashed."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
