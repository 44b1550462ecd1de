"""Document diversity: at most M chunks per document in a fused top-k.

One long document (a several-hundred-page state plan) can fill the whole top-k with its chunks and
crowd out the answer's source. The cap walks the fused list best first, skips a chunk whose
document already has ``max_per_doc`` chunks kept, and takes the next-best chunk instead, so the
top-k stays full while there are candidates. ``max_per_doc = 0`` is off. Applied after fusion,
before the top-k cut, by ``fusion`` and ``hybrid`` and by the ablation grid (the same function).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rag_lab.retrieve.post_fusion import cap_per_document, check_max_per_doc, post_fusion
from rag_lab.retrieve.records import doc_key

if TYPE_CHECKING:
    from llama_index.core.schema import NodeWithScore

    from rag_lab.retrieve.configuration import RetrievalConfig

__all__ = ["cap_per_document", "check_max_per_doc", "post_fusion_results"]


def post_fusion_results(results: Sequence[NodeWithScore], config: RetrievalConfig) -> list[NodeWithScore]:
    """The fused ``results`` through the one post-fusion step the ablation grid also applies
    (:func:`rag_lab.retrieve.configuration.post_fusion`: the cap and any axis added, then ``config.top_k``).
    With a cap, a kept result that carries an explanation (``--explain``) also records its rank in
    the fused list and the chunks the cap skipped just above it (rank and document)."""
    by_id = {r.node.node_id: r for r in results}
    ids = post_fusion(list(by_id), config.post_fusion_values(), lambda i: doc_key(by_id[i].node.metadata),
                      config.top_k)
    out = [by_id[i] for i in ids]
    if config.max_per_doc:
        _explain_cap(results, out, config.max_per_doc, config.top_k)
    return out


def _explain_cap(results: Sequence[NodeWithScore], out: Sequence[NodeWithScore], max_per_doc: int, top_k: int) -> None:
    kept, skipped = cap_per_document(results, lambda r: doc_key(r.node.metadata), max_per_doc, top_k)
    shown = {id(r) for r in out}
    for rank, result in kept:
        explanation = result.node.metadata.get("explanation")
        if id(result) in shown and isinstance(explanation, dict):
            above = [{"fused_rank": r, "document": doc_key(s.node.metadata)} for r, s in skipped
                     if r < rank and not any(r < k < rank for k, _ in kept)]
            explanation.update({"fused_rank": rank, "max_per_doc": max_per_doc, "skipped_by_cap": above})
