"""``llm_identity(llm)``: a stable name for what answers, for cache keys of judged scores.

Two judges that can score differently must never share cache entries: a provider's model name is
not enough (``OPENAI_BASE_URL`` can point ``gpt-4o-mini`` at another server), and an LLM object
passed in by a caller has no configured name at all.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from rag_lab.models.llm._guard import ErrorGuard

# Field names whose values are credentials: never part of an identity, not even hashed.
_SECRET_FIELD = re.compile(r"key|secret|token|password|credential", re.I)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # reprs of functions/objects: not stable across runs


def llm_identity(llm: Any) -> str:
    """``provider@endpoint:model`` for our provider LLMs; for any other LLM object its class, model
    name and a hash of its configuration (fields, without credentials)."""
    guard = getattr(llm, "_guard", None)
    if isinstance(guard, ErrorGuard):
        return guard.identity
    cls = type(llm)
    name = getattr(getattr(llm, "metadata", None), "model_name", None) or "?"
    return f"object:{cls.__module__}.{cls.__qualname__}:{name}:{_config_hash(llm)}"


def _config_hash(llm: Any) -> str:
    try:
        fields = llm.model_dump()
    except Exception:  # noqa: BLE001 - not a pydantic model: its public attributes
        fields = {k: v for k, v in vars(llm).items() if not k.startswith("_")} if hasattr(llm, "__dict__") else {}
    fields = {k: v for k, v in fields.items() if not _SECRET_FIELD.search(k)}
    text = _ADDRESS.sub("", json.dumps(fields, sort_keys=True, default=repr))
    return hashlib.sha256(text.encode()).hexdigest()[:12]
