"""Scoring works where an event loop is already running (a Jupyter kernel, e.g. a notebook calling
``run_evaluation``): RAGAS's async metrics must not fail with "asyncio.run() cannot be called from a
running event loop"."""

from __future__ import annotations

import asyncio

from rag_lab.evaluate.run.scorer import Scorer


def _record():
    return {"id": "q1", "question": "What is the bi-weekly income limit for a family of 5?",
            "answer": "The limit is $4,106 in BCY 2026 [Doc 1].", "reference": "$4,106 (BCY 2026).",
            "contexts": [{"doc_id": "a.pdf", "filename": "a.pdf", "text": "family of 5: $4,106 bi-weekly"}],
            "relevant": {"a.pdf": 1}}


def test_scorer_inside_a_running_loop(lab_settings):
    scorer = Scorer(lab_settings, metrics=["rouge_l", "key_fact_recall", "id_context_recall"])

    async def inside():
        return scorer.score(_record())

    scores, errors = asyncio.run(inside())
    assert errors == {}
    assert scores["key_fact_recall"] == 1.0 and scores["id_context_recall"] == 1.0 and scores["rouge_l"] > 0
