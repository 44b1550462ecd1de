"""How lexical human questions are: the bound synthetic questions are kept within.

A human question's overlap is the share of its content tokens stated by the best-matching chunk of
its relevant document(s) (:func:`rag_lab.evaluate.questions.checks.lexical_overlap`); a synthetic one's, by its
own source chunk. Synthetic questions above the human questions' ``HUMAN_QUANTILE`` are refused
(``too_lexical``): they would flatter BM25. A corpus without human questions uses
``DEFAULT_MAX_OVERLAP``, the human quantile measured on this repository's two human sets
(``synth`` writes each in ``qa.synthetic.summary.json``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.questions.checks import tokens
from rag_lab.evaluate.questions.sampling import SourceChunk

HUMAN_QUANTILE = 0.9
# texas_childcare_full's 0.9 quantile is 0.882 (236 questions) and SciFact's 0.875 (300), as `synth` writes
# them in qa.synthetic.summary.json: without human questions, the stricter one.
DEFAULT_MAX_OVERLAP = 0.875
MIN_HUMAN_QUESTIONS = 20


@dataclass(frozen=True)
class OverlapBound:
    max_overlap: float
    source: str  # "human questions (n=236)" or "default"
    human: list[float] = field(default_factory=list)


def human_overlaps(dataset: Dataset, chunks: list[SourceChunk]) -> list[float]:
    """Each judged human question's overlap with the best chunk of its relevant documents."""
    try:
        queries, qrels = dataset.judged_queries()
    except Exception:  # noqa: BLE001 - no human questions (or none judged): nothing to measure
        return []
    relevant = {doc for judged in qrels.values() for doc, grade in judged.items() if grade > 0}
    by_document: dict[str, list[set[str]]] = defaultdict(list)
    for chunk in chunks:
        if chunk.document in relevant:  # each chunk read once (a document has many questions)
            by_document[chunk.document].append(set(tokens(chunk.text)))
    overlaps = []
    for qid, question in queries.items():
        asked = set(tokens(question))
        stated = [s for doc, grade in qrels.get(qid, {}).items() if grade > 0 for s in by_document.get(doc, [])]
        if asked and stated:
            overlaps.append(max(len(asked & s) for s in stated) / len(asked))
    return overlaps


def overlap_bound(dataset: Dataset, settings: Settings, chunks: list[SourceChunk]) -> OverlapBound:
    """The human questions' ``HUMAN_QUANTILE`` overlap, or the default without enough of them."""
    human = human_overlaps(dataset, chunks) if dataset.has_qa or dataset.has_beir_queries else []
    if len(human) < MIN_HUMAN_QUESTIONS:
        return OverlapBound(DEFAULT_MAX_OVERLAP, "default", human)
    return OverlapBound(round(float(np.quantile(human, HUMAN_QUANTILE)), 4), f"human questions (n={len(human)})", human)


def quantiles(values: list[float]) -> dict[str, float]:
    """Summary of a distribution for the report: n, mean and the 10/50/90 % quantiles."""
    if not values:
        return {"n": 0}
    q = np.quantile(values, [0.1, 0.5, 0.9])
    return {"n": len(values), "mean": round(float(np.mean(values)), 3), "p10": round(float(q[0]), 3),
            "p50": round(float(q[1]), 3), "p90": round(float(q[2]), 3)}
