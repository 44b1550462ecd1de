"""Kendra Retrieve result items as rag-lab nodes: their scores, metadata and identity.

Scores
------
Kendra gives no numeric score, only a confidence bucket (``ScoreAttributes.ScoreConfidence``).
We map it to a number with :data:`CONFIDENCE_SCORES`::

    VERY_HIGH 1.0, HIGH 0.75, MEDIUM 0.5, LOW 0.25, NOT_AVAILABLE (or missing) 0.0

and then make the scores follow Kendra's order, because the order is Kendra's real ranking
signal and the buckets are coarse (and not even monotone in rank in every response)::

    score(rank r) = min(bucket(r), score-bucket of rank r-1) - RANK_EPSILON * (r - 1)

i.e. a running minimum of the bucket values, minus a tie-breaker of 1e-4 per rank. Scores are
therefore *strictly* decreasing in rank (so any score sort - ranx, fusion, rerankers - keeps
Kendra's order instead of breaking ties arbitrarily) and stay within 0.01 of their bucket value
for up to 100 results, so the bucket is still readable from the score. Consequence to know:
``NOT_AVAILABLE`` results after the first get tiny *negative* scores. The raw bucket is always
kept in ``metadata["kendra_confidence"]``.

Identity
--------
``chunk_id`` is the result item's ``Id``; the node id is ``uuid5(index id, DocumentId, page,
passage text)``. Kendra's result ids embed the query id, so they differ between queries; the
node id does not: the same passage found by two different queries is the same node.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from llama_index.core.schema import NodeWithScore, TextNode

#: Documented mapping of Kendra's confidence buckets to numbers (before the rank tie-breaker).
CONFIDENCE_SCORES: dict[str, float] = {
    "VERY_HIGH": 1.0,
    "HIGH": 0.75,
    "MEDIUM": 0.5,
    "LOW": 0.25,
    "NOT_AVAILABLE": 0.0,
}
#: Subtracted once per rank so that scores are strictly decreasing (100 ranks → at most 0.0099).
RANK_EPSILON = 1e-4
#: Reserved Kendra field: "the page number in a PDF file where the document excerpt appears".
PAGE_ATTRIBUTE = "_excerpt_page_number"


def result_nodes(index_id: str, response: Mapping[str, Any]) -> list[NodeWithScore]:
    """The Retrieve response's result items as scored nodes, in Kendra's order (see the module docstring)."""
    query_id = response.get("QueryId")
    results: list[NodeWithScore] = []
    floor = 1.0  # running minimum of the bucket values (see the module docstring)
    for rank, item in enumerate(response.get("ResultItems") or [], start=1):
        confidence = (item.get("ScoreAttributes") or {}).get("ScoreConfidence") or "NOT_AVAILABLE"
        floor = min(floor, CONFIDENCE_SCORES.get(confidence, 0.0))
        score = floor - RANK_EPSILON * (rank - 1)

        doc_id = item.get("DocumentId") or ""
        uri = item.get("DocumentURI") or None
        title = item.get("DocumentTitle") or None
        # Kendra always sends an Id; the fallback only keeps a malformed item addressable.
        chunk_id = item.get("Id") or f"{doc_id}#{rank}"
        metadata: dict[str, Any] = {
            "doc_id": doc_id,
            "chunk_id": chunk_id,
            "filename": title or _filename_from_uri(uri) or doc_id,
            "title": title,
            "source_url": uri,
            "page": _page(item.get("DocumentAttributes")),
            "kendra_rank": rank,
            "kendra_confidence": confidence,
            "kendra_query_id": query_id,
        }
        # Ranking bookkeeping is noise to the LLM and the embedder.
        hidden = ["kendra_rank", "kendra_confidence", "kendra_query_id"]
        node = TextNode(
            # The passage itself, not the result Id (which embeds the query id): the same
            # passage found by two queries is one node, so fusion and evaluation can match it.
            id_=str(uuid.uuid5(uuid.NAMESPACE_URL,
                               f"kendra:{index_id}:{doc_id}:{metadata['page']}:{item.get('Content') or ''}")),
            text=item.get("Content") or "",
            metadata=metadata,
            excluded_llm_metadata_keys=list(hidden),
            excluded_embed_metadata_keys=list(hidden),
        )
        results.append(NodeWithScore(node=node, score=score))
    return results


def _filename_from_uri(uri: str | None) -> str | None:
    if not uri:
        return None
    name = PurePosixPath(unquote(urlparse(uri).path)).name
    return name or None


def _page(attributes: Any) -> int | None:
    for attribute in attributes or []:
        if attribute.get("Key") == PAGE_ATTRIBUTE:
            value = (attribute.get("Value") or {}).get("LongValue")
            return int(value) if value is not None else None
    return None
