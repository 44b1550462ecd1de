"""Failure analysis frames from a run folder: worst samples per mode with their details and a
diagnosis, and the questions × modes score matrix."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from rag_lab.evaluate.store.frames import load_run
from rag_lab.report.failures import diagnose, score_matrix, worst_samples


def _record(qid, mode, score, *, contexts=(), cited=(), answer="", reference="$4,106 for BCY 2026.", error=None):
    return {"id": qid, "mode": mode, "question": f"question {qid}", "reference": reference,
            "source_files": ["a.pdf"], "relevant": {"a.pdf": 1}, "error": error, "answer": answer,
            "contexts": [{"rank": i, "doc_id": f, "filename": f, "page": 1, "score": 0.5 / i, "text": "t"}
                         for i, f in enumerate(contexts, start=1)],
            "cited_sources": [{"doc": c, "page": 1, "url": None} for c in cited],
            "scores": {} if error else {"key_fact_recall": score, "ndcg@10": 1.0}}


@pytest.fixture
def run(tmp_path):
    records = {
        "bm25": [_record("q1", "bm25", 1.0, contexts=["a.pdf"], cited=["a.pdf"], answer="$4,106 in BCY 2026"),
                 _record("q2", "bm25", 0.0, contexts=["b.pdf", "c.pdf"], cited=["b.pdf"], answer="no idea"),
                 _record("q3", "bm25", 0.5, contexts=["b.pdf", "a.pdf"], answer="$4,106"),
                 _record("q4", "bm25", None)],  # failed metric: NaN, never ranked
        "dense": [_record("q1", "dense", 0.0, contexts=["a.pdf"], cited=["a.pdf"], answer="BCY 2026"),
                  _record("q2", "dense", 0.8, contexts=["a.pdf"], cited=["a.pdf"]),
                  _record("q3", "dense", None, error="RuntimeError: boom")],
    }
    (tmp_path / "manifest.json").write_text(json.dumps({"config": {"modes": ["bm25", "dense"]}}))
    for mode, items in records.items():
        (tmp_path / mode).mkdir()
        (tmp_path / mode / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    return load_run(tmp_path)


def test_worst_samples_per_mode_with_details(run):
    worst = worst_samples(run, "key_fact_recall", n=2)
    bm25 = worst[worst["mode"] == "bm25"]
    assert list(bm25["sample_id"]) == ["q2", "q3"] and list(bm25["rank"]) == [1, 2]
    q2, q3 = bm25.iloc[0], bm25.iloc[1]
    assert q2["value"] == 0.0 and q2["diagnosis"].startswith("retrieval")
    assert q2["retrieved"] == ["b.pdf p.1 (0.5)", "c.pdf p.1 (0.25)"] and q2["cited"] == ["b.pdf p.1"]
    assert pd.isna(q2["first_relevant_rank"]) and not q2["cited_relevant"]
    assert set(q2["missing_facts"]) == {"dollar_4106", "bcy26"}
    assert q3["retrieved"][1].startswith("✓ a.pdf") and q3["first_relevant_rank"] == 2
    assert q3["diagnosis"] == "generation: relevant document retrieved, nothing cited" and q3["missing_facts"] == ["bcy26"]
    dense = worst[worst["mode"] == "dense"]
    assert list(dense["sample_id"]) == ["q1", "q2"]  # the errored q3 has no score
    assert dense.iloc[0]["cited_relevant"] and dense.iloc[0]["diagnosis"] == "generation: relevant document cited"
    assert list(worst_samples(run, "key_fact_recall", n=5, modes=["dense"])["mode"].unique()) == ["dense"]
    assert worst_samples(run, "no_such_metric").empty


def test_diagnose_error_and_unjudged():
    assert diagnose({"error": "x"}) == "error"
    assert diagnose({"relevant": {}, "source_files": []}) == "no relevance judgement"
    other = _record("q", "m", 0.0, contexts=["a.pdf"], cited=["b.pdf"])
    assert diagnose(other) == "generation: relevant document retrieved, another cited"


def test_score_matrix_hardest_first(run):
    matrix = score_matrix(run, "key_fact_recall")
    assert list(matrix.columns) == ["bm25", "dense"]
    assert list(matrix.index) == ["q2", "q1", "q3", "q4"]  # mean 0.4, 0.5, 0.5 (dense errored), unscored last
    assert np.isnan(matrix.loc["q4", "bm25"]) and np.isnan(matrix.loc["q3", "dense"])
