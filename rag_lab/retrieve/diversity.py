"""Document diversity: at most M chunks per document in a fused top-k.

One long document (a several-hundred-page state plan) can fill the whole top-k with its chunks and
crowd out the answer's source. The cap walks the fused list best first, skips a chunk whose
document already has ``max_per_doc`` chunks kept, and takes the next-best chunk instead, so the
top-k stays full while there are candidates. ``max_per_doc = 0`` is off. Applied after fusion,
before the top-k cut, by ``fusion`` and ``hybrid`` and by the ablation grid (the same function).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from llama_index.core.schema import NodeWithScore

from rag_lab.retrieve.records import doc_key

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


def cap_results(results: Sequence[NodeWithScore], max_per_doc: int, top_k: int) -> list[NodeWithScore]:
    """The fused ``results`` capped to ``max_per_doc`` chunks per document, cut at ``top_k``. A kept
    result that carries an explanation (``--explain``) also records its rank in the fused list and
    the chunks the cap skipped just above it (rank and document)."""
    if not max_per_doc:
        return list(results)[:top_k]
    kept, skipped = cap_per_document(results, lambda r: doc_key(r.node.metadata), max_per_doc, top_k)
    out = []
    for rank, result in kept:
        explanation = result.node.metadata.get("explanation")
        if isinstance(explanation, dict):
            above = [{"fused_rank": r, "document": doc_key(s.node.metadata)} for r, s in skipped
                     if r < rank and not any(r < k < rank for k, _ in kept)]
            explanation.update({"fused_rank": rank, "max_per_doc": max_per_doc, "skipped_by_cap": above})
        out.append(result)
    return out
