"""The one step after fusion, shared by the live retrievers (``fusion``, ``hybrid``, their rewrite
wrapper: :func:`rag_lab.retrieve.diversity.post_fusion_results`) and the ablation grid
(:func:`rag_lab.evaluate.ablation.grid.compute_grid`): the fused chunk ids through each ranking
kernel of the lever table (:mod:`rag_lab.retrieve.configuration`; the per-document cap, and any axis
added), then the top-k cut. Plain Python: the grid's core imports it without LlamaIndex.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def check_max_per_doc(value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"max_per_doc must be a whole number ≥ 0 (0 = no cap), got {value!r}")
    return value


def cap_per_document(ranked: Sequence[T], document_of: Callable[[T], str], max_per_doc: int,
                     top_k: int | None = None) -> tuple[list[tuple[int, T]], list[tuple[int, T]]]:
    """``(kept, skipped)``: ``ranked`` items (best first) with at most ``max_per_doc`` per document,
    the first ``top_k`` of them, each with its 1-based rank in ``ranked``; ``skipped`` the items the
    cap passed over before the last kept one. ``max_per_doc = 0``: nothing is skipped."""
    check_max_per_doc(max_per_doc)
    kept: list[tuple[int, T]] = []
    skipped: list[tuple[int, T]] = []
    per_doc: dict[str, int] = {}
    for rank, item in enumerate(ranked, start=1):
        if top_k is not None and len(kept) >= top_k:
            break
        doc = document_of(item)
        if max_per_doc and per_doc.get(doc, 0) >= max_per_doc:
            skipped.append((rank, item))
            continue
        per_doc[doc] = per_doc.get(doc, 0) + 1
        kept.append((rank, item))
    return kept, skipped


def capped(ranked: Sequence[str], cap: int, document_of: Callable[[str], str], depth: int) -> list[str]:
    """The per-document cap's kernel (:func:`cap_per_document`)."""
    kept, _ = cap_per_document(ranked, document_of, cap, depth)
    return [chunk for _, chunk in kept]


def post_fusion(ranked: Sequence[str], values: Sequence[tuple[Any, Any]], document_of: Callable[[str], str],
                top_k: int) -> list[str]:
    """The one step after fusion, for the live retrievers and the ablation grid alike: ``ranked``
    (fused chunk ids, best first) through each (kernel axis, value) in the table's order (the
    per-document cap refilling from further down), cut at ``top_k``."""
    out = list(ranked)
    for axis, value in values:
        out = axis.kernel(out, value, document_of, top_k)
    return out[:top_k]


def needs_whole_list(values: Sequence[tuple[Any, Any]]) -> bool:
    """True when a kernel is off its default: it may pull results from anywhere in the fused list
    (the cap refills the top-k from further down), so the whole list must be fused, not its top-k."""
    return any(value != axis.lab_default() for axis, value in values)
