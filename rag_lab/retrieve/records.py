"""Plain records of retrieval results: the one JSON shape used by the CLI, answers and reports."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llama_index.core.schema import NodeWithScore


def doc_key(metadata: dict) -> str:
    """The one document identity that relevance judgements use, for every dataset kind.

    It is ``doc_id``: the corpus ``_id`` for BEIR, the path relative to the documents folder for
    folders (``sub/file.pdf``), which is what :meth:`Dataset.load_qa` turns a Q&A pair's
    ``source_file`` into. ``filename`` (the base name) is only for display (citations). IR metrics,
    ablations and ID-based context precision/recall all key documents through this function.
    """
    content = metadata.get("_node_content")
    if isinstance(content, str):
        # A flattened node (a Qdrant payload, a bm25 corpus entry): LlamaIndex overwrites its top-level
        # doc_id with the ref_doc_id, so the node's own metadata is read from the serialized node.
        try:
            inner = json.loads(content).get("metadata") or {}
        except (ValueError, AttributeError):
            inner = {}
        key = inner.get("doc_id") or inner.get("filename") or metadata.get("filename")
    else:
        key = metadata.get("doc_id") or metadata.get("filename")
    if key is None:
        raise KeyError("result node has neither filename nor doc_id metadata")
    return str(key)


def result_record(rank: int, result: NodeWithScore, include_explanation: bool = False) -> dict:
    meta = result.node.metadata
    record = {
        "rank": rank, "score": result.score, "doc_id": meta.get("doc_id"),
        "filename": meta.get("filename"), "page": meta.get("page"), "text": result.node.get_content(),
    }
    if include_explanation and meta.get("explanation"):
        record["explanation"] = meta["explanation"]
    return record


def results_json(results: list[NodeWithScore], include_explanation: bool = False) -> list[dict]:
    return [result_record(i, r, include_explanation) for i, r in enumerate(results, start=1)]
