"""Where a dataset's questions come from: the human ``qa.jsonl``, synthetic ones made from its chunks
with a model (``synth``), or any question file. Nothing here scores anything.

Exports load on first use: the CLI's parser reads the kinds' names without importing the models."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {"ORIGIN": "records", "SYNTHETIC_FILE": "records", "SynthOutcome": "records",
            "SynthStopped": "make", "synth": "make"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
