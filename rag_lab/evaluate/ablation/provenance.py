"""What a run's manifest records about where it ran: package versions, leg timings (the git commit:
:func:`rag_lab.evaluate.store.manifest.git_commit`, shared with eval runs)."""

from __future__ import annotations

import platform
import statistics
from datetime import datetime, timezone

import numpy as np


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("rag-lab", "llama-index-core", "qdrant-client", "bm25s", "ranx", "ragas", "numpy", "pandas", "scipy"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def timing_summary(timings: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Per leg: p50 / p95 milliseconds per question."""
    legs: dict[str, list[float]] = {}
    for per_leg in timings.values():
        for leg, ms in per_leg.items():
            legs.setdefault(leg, []).append(ms)
    return {leg: {"p50_ms": statistics.median(v), "p95_ms": float(np.percentile(v, 95)), "n": len(v)}
            for leg, v in legs.items()}


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
