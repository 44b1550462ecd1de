"""The selection metrics of every grid configuration, per question.

- ``chunk_hit@5`` (default for Q&A datasets): 1 when a relevant document owns one of the first five
  chunks of the configuration's fused, capped list (of its first ``min(5, top_k)`` chunks) — the
  goal metric and :data:`rag_lab.evaluate.retrieval.ir.CHUNK_HIT` of ``rag-lab ir``, so
  ``ir --config FILE`` reproduces it. A Q&A question has one source document: what matters is
  whether the generator sees it among the first chunks, not the order of the other documents.
- ``ndcg@10`` (default for BEIR datasets, graded and several relevant documents per query: SciFact's
  published anchor): ranx nDCG@10 of the documents folded from the configuration's chunks (its
  top-k: at top-10 the documents of the first ten chunks).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rag_lab.evaluate.ablation.grid import Candidates, GridResult
from rag_lab.evaluate.ablation.metrics import ir_per_query
from rag_lab.evaluate.retrieval.ir import CHUNK_HIT, CHUNK_HIT_K, chunk_hits

NDCG10 = "ndcg@10"
SELECTION_METRICS = (CHUNK_HIT, NDCG10)


def default_metric(dataset) -> str:
    """chunk_hit@5 for Q&A folders (one source document per question), nDCG@10 for BEIR qrels."""
    return CHUNK_HIT if dataset.kind == "folder" and dataset.has_qa else NDCG10


def chunk_documents(questions: Iterable[Candidates]) -> dict[str, str]:
    """chunk id → its document key, from the legs' candidate lists."""
    return {chunk: doc for q in questions for leg in q.legs.values() for chunk, doc, _ in leg}


def chunk_hit_scores(grid: GridResult, doc_of: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
                     k: int = CHUNK_HIT_K) -> dict[str, dict[str, float]]:
    """``scores[config_id][qid]``: a relevant document among the first ``k`` chunks (judged
    questions; :func:`rag_lab.evaluate.retrieval.ir.chunk_hits` on each configuration's chunks)."""
    return {cid: chunk_hits({q: [doc_of[c] for c in chunks[:k]] for q, chunks in per_q.items()}, qrels, k)
            for cid, per_q in grid.chunks.items()}


def ndcg10_scores(grid: GridResult, qrels: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, float]]:
    cutoffs = {cid: 10 for cid in grid.docs}
    scored = ir_per_query(grid.docs, qrels, metrics=("ndcg",), cutoffs=cutoffs)
    return {cid: metrics["ndcg@top_k"] for cid, metrics in scored.items()}


def selection_scores(metric: str, grid: GridResult, questions: Sequence[Candidates],
                     qrels: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, float]]:
    if metric == CHUNK_HIT:
        return chunk_hit_scores(grid, chunk_documents(questions), qrels)
    if metric == NDCG10:
        return ndcg10_scores(grid, qrels)
    raise ValueError(f"unknown selection metric {metric!r}: use one of {', '.join(SELECTION_METRICS)}")
