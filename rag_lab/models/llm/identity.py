"""One name for one LLM: ``llm_name`` spells it, ``llm_identity(llm)`` names an LLM object.

``provider:model``, or ``provider@endpoint:model`` when the model is served from somewhere other
than the provider's default (an OpenAI-compatible server, ``OPENAI_BASE_URL``, a Bedrock region):
two servers behind one model name are two models. The answer cache, the judge cache, the manifest
and the dry run all use this spelling.

Two judges that can score differently must never share cache entries: a provider's model name is
not enough (``OPENAI_BASE_URL`` can point ``gpt-4o-mini`` at another server), and an LLM object
passed in by a caller has no configured name at all (its class, model name and a hash of its
configuration name it). ``output_settings`` is what shapes a named LLM's replies besides its name.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from rag_lab.config import LLM_PROVIDERS
from rag_lab.models.llm._guard import ErrorGuard

# Field names whose values are credentials: never part of an identity, not even hashed.
_SECRET_FIELD = re.compile(r"key|secret|token|password|credential", re.I)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # reprs of functions/objects: not stable across runs


def llm_name(provider: str, model: str, endpoint: str | None = None) -> str:
    """``provider:model``, with ``@endpoint`` when the endpoint is not the provider's default."""
    endpoint = (endpoint or "").rstrip("/")
    spec = LLM_PROVIDERS.get(provider)
    if endpoint and endpoint != (spec.default_endpoint if spec else None):  # the SDK's default: not in the name
        return f"{provider}@{endpoint}:{model}"
    return f"{provider}:{model}"


def configured_name(settings: Any, model: str) -> str:
    """:func:`llm_name` of ``model`` served by the configured provider (from settings, nothing built)."""
    return llm_name(settings.llm_provider, model, configured_endpoint(settings))


def configured_endpoint(settings: Any) -> str | None:
    """Where the configured provider sends requests, as its SDK decides (None: its fixed default)."""
    spec = LLM_PROVIDERS.get(settings.llm_provider)
    if spec is None:
        return None
    if spec.endpoint_env:
        import os

        return os.environ.get(spec.endpoint_env) or None  # the SDK's own rule
    return getattr(settings, spec.endpoint_setting) if spec.endpoint_setting else None


def llm_identity(llm: Any) -> str:
    """:func:`llm_name` for our provider LLMs, ``local:<catalog name>`` (or ``local:<file>.gguf#<bytes>``)
    for the local model (not its path or threads: moving the data folder changes no reply); for any other LLM object its class,
    model name and a hash of its configuration (fields, without credentials)."""
    guard = getattr(llm, "_guard", None)
    if isinstance(guard, ErrorGuard):
        # the guard carries the provider's label; LLMs are named by its settings spelling
        names = {spec.label: spec.name for spec in LLM_PROVIDERS.values()}
        return llm_name(names.get(guard.provider, guard.provider.lower()), guard.model, guard.endpoint)
    if _is_local(llm):
        return llm_name("local", local_model_name(llm.model_name, llm.model_path))
    cls = type(llm)
    name = getattr(getattr(llm, "metadata", None), "model_name", None) or "?"
    return f"object:{cls.__module__}.{cls.__qualname__}:{name}:{_config_hash(llm)}"


def output_settings(llm: Any) -> dict[str, Any]:
    """What shapes the replies of a provider or local LLM besides its name (an object LLM's
    configuration hash already holds them): temperature, token budget, and the local model's window."""
    names = ("temperature", "max_tokens") + (("context_window",) if _is_local(llm) else ())
    return {name: getattr(llm, name, None) for name in names}


def local_model_name(model: str, path: str) -> str:
    """A local model's name by its content, not where it lies: a catalog model by its catalog name
    (aliases resolved; its file is sha256-verified against the catalog), any other .gguf file by its
    file name and size in bytes (cheap; the same file in another checkout or data folder is the same model)."""
    from rag_lab.errors import ConfigError
    from rag_lab.models.llm.catalog import lookup

    try:
        return lookup(model).name
    except ConfigError:
        file = Path(path)
        return f"{file.name}#{file.stat().st_size if file.is_file() else 'missing'}"


def _is_local(llm: Any) -> bool:
    from rag_lab.models.llm.local_llm import LocalLLM

    return isinstance(llm, LocalLLM)


def _config_hash(llm: Any) -> str:
    """A hash of the LLM's configuration: its pydantic fields (``model_dump``: a field declared with
    ``exclude=True``, e.g. a record of calls, is not configuration), without credentials."""
    try:
        fields = llm.model_dump()
    except Exception:  # noqa: BLE001 - not a pydantic model: its public attributes
        fields = {k: v for k, v in vars(llm).items() if not k.startswith("_")} if hasattr(llm, "__dict__") else {}
    fields = {k: v for k, v in fields.items() if not _SECRET_FIELD.search(k)}
    text = _ADDRESS.sub("", json.dumps(fields, sort_keys=True, default=repr))
    return hashlib.sha256(text.encode()).hexdigest()[:12]
