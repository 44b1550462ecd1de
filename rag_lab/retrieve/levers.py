"""The retrieval levers' names: one per lever for the CLI flag (``--fusion-k``), the Python API's
keyword, the ``--config`` file's key and the ``--grid`` file's key (``fusion_k``).

The retrievers' constructors keep RRF's own name for k (``rrf_k``, as in the papers and in
:mod:`rag_lab.fusion`); :func:`constructor_params` is the one place that translates.
"""

from __future__ import annotations

from typing import Any

from rag_lab.retrieve.configuration import fused_defaults

# The fused modes' levers (fusion, hybrid), as every entry point names them: the ablation axes'
# (:mod:`rag_lab.retrieve.configuration`) and the year boost.
FUSED_LEVERS = (*fused_defaults(), "year_boost")
# The retriever constructors' names of the levers that differ (RRF's own name for k).
CONSTRUCTOR_NAMES = {"fusion_k": "rrf_k"}
# Names that meant a lever before and are refused with the name to use.
RENAMED = {"rrf_k": "fusion_k"}


def renamed_hint(name: str) -> str | None:
    """"'rrf_k' is now called 'fusion_k'" when ``name`` is an old name of a lever, else None."""
    new = RENAMED.get(str(name).replace("-", "_"))
    return f"{name!r} is now called {new!r}" if new else None


def constructor_params(params: dict[str, Any]) -> dict[str, Any]:
    """Lever names → the retriever constructors' parameter names (``fusion_k`` → ``rrf_k``); an old
    name is refused, so one run never carries a lever under two names."""
    for name in params:
        if hint := renamed_hint(name):
            raise TypeError(f"unknown retrieval parameter {name!r}: {hint}")
    return {CONSTRUCTOR_NAMES.get(name, name): value for name, value in params.items()}


def lever_name(constructor_name: str) -> str:
    """A retriever constructor's parameter name → the lever's (``rrf_k`` → ``fusion_k``)."""
    return {c: lever for lever, c in CONSTRUCTOR_NAMES.items()}.get(constructor_name, constructor_name)
