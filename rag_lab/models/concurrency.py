"""How many LLM calls may be in flight at once (``--concurrency``, ``RAG_LAB_LLM_CONCURRENCY``).

It lives with the models because the answer depends only on which model answers: the in-process
local model takes one prompt at a time, remote providers take many. Index builds (the contextual
pass), evaluation runs and ablations all ask here, so they agree.
"""

from __future__ import annotations

from typing import Any

from rag_lab.config import Settings
from rag_lab.errors import ConfigError

REMOTE_CONCURRENCY = 8


def resolve_concurrency(concurrency: int | None, settings: Settings, judge_cfg: Settings | None, llm: Any) -> int:
    """1 for the in-process local model (one llama.cpp context answers one prompt at a time), 8 for
    remote providers; an explicit value > 1 with a local generator or judge is refused."""
    local = [what for what, cfg in (("generator", settings if llm is None else None), ("judge", judge_cfg))
             if cfg is not None and cfg.llm_is_local]
    if concurrency is None:
        return 1 if local or llm is not None else REMOTE_CONCURRENCY
    if concurrency < 1:
        raise ConfigError(f"--concurrency must be ≥ 1, got {concurrency}", "use --concurrency 1 or more")
    if concurrency > 1 and local:
        raise ConfigError(f"--concurrency {concurrency}: the local model ({' and '.join(local)}) answers one prompt "
                          "at a time (one llama.cpp context in this process)",
                          "use --concurrency 1, or a remote provider (RAG_LAB_LLM_PROVIDER=openai_compatible, "
                          "openai, groq, bedrock; --judge PROVIDER:MODEL)")
    return concurrency
