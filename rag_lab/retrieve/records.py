"""Plain records of retrieval results: the one JSON shape used by the CLI, answers and reports."""

from __future__ import annotations

from llama_index.core.schema import NodeWithScore


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
