"""IR evaluation: exact metric values on a toy run, and a real run on a SciFact slice."""

from __future__ import annotations

import gzip
import json
import math

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.retrieval import ir
from rag_lab.index import build_index

REPO_SCIFACT = "scifact"


def test_fold_to_documents_keeps_best_chunk():
    def hit(doc, score):
        return NodeWithScore(node=TextNode(text="t", metadata={"doc_id": doc}), score=score)

    assert ir.fold_to_documents([hit("a", 0.9), hit("b", 0.5), hit("a", 0.95)]) == {"a": 0.95, "b": 0.5}


def test_score_run_exact_values():
    qrels = {"q1": {"d1": 1}, "q2": {"d9": 1}}
    run = {"q1": {"d2": 0.9, "d1": 0.8}, "q2": {}}
    means, per_query = ir.score_run(run, qrels)
    # q1: relevant at rank 2 → nDCG = 1/log2(3), MRR = 1/2; q2 retrieved nothing → 0
    assert means["ndcg@10"] == pytest.approx((1 / math.log2(3)) / 2)
    assert means["mrr@10"] == pytest.approx(0.25)
    assert means["recall@100"] == pytest.approx(0.5)
    assert per_query["mrr@10"]["q1"] == pytest.approx(0.5)


def test_per_query_scores_belong_to_their_queries():
    # File order "3", "100", "20" differs from ranx's sorted order "100", "20", "3".
    qrels = {"3": {"a": 1}, "100": {"b": 1}, "20": {"c": 1}}
    run = {"3": {"a": 1.0}, "100": {"x": 1.0, "b": 0.5}, "20": {"x": 1.0}}
    _, per_query = ir.score_run(run, qrels)
    assert per_query["mrr@10"] == {"3": 1.0, "100": 0.5, "20": 0.0}


@pytest.fixture(scope="module")
def scifact_slice(tmp_path_factory, lab_settings):
    """The first 15 test queries with their relevant abstracts plus 150 other abstracts."""
    source = resolve_dataset(REPO_SCIFACT, lab_settings.datasets_dir)
    queries = dict(list(source.load_queries().items())[:15])
    qrels = {q: d for q, d in source.load_qrels().items() if q in queries}
    wanted = {d for docs in qrels.values() for d in docs}
    root = tmp_path_factory.mktemp("scifact_slice")
    kept = 0
    with gzip.open(source.corpus_file, "rt", encoding="utf-8") as src, open(root / "corpus.jsonl", "w") as out:
        for line in src:
            doc_id = json.loads(line)["_id"]
            if doc_id in wanted or kept < 150:
                out.write(line)
                kept += doc_id not in wanted
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, docs in qrels.items() for d in docs))
    dataset = resolve_dataset(root)
    build_index(dataset, lab_settings, progress=False)
    return dataset


def test_evaluate_modes_on_a_scifact_slice(scifact_slice, lab_settings):
    report = ir.evaluate_modes(scifact_slice, lab_settings, ["dense", "bm25", "fusion", "hybrid"], progress=False)
    assert set(report.results) == {"dense", "bm25", "fusion", "hybrid"}
    for mode, row in report.results.items():
        assert set(row) == {"ndcg@10", "recall@100", "mrr@10", "chunk_hit@5", "judged@10", "p50_ms"}
        assert 0 < row["judged@10"] <= 1 and 0 <= row["chunk_hit@5"] <= 1
        assert 0.4 < row["ndcg@10"] <= 1.0, (mode, row)  # easy slice: relevant docs are findable
        assert row["p50_ms"] > 0
    # fusion and hybrid use the same RRF convention and the same legs' depth → close scores
    assert abs(report.results["fusion"]["ndcg@10"] - report.results["hybrid"]["ndcg@10"]) < 0.1


def test_evaluation_resumes_from_checkpoints(scifact_slice, lab_settings, monkeypatch):
    first = ir.evaluate_modes(scifact_slice, lab_settings, ["bm25"], {"fusion_k": None}, progress=False)

    def must_not_run(*args, **kwargs):
        raise AssertionError("a checkpointed run was recomputed")

    monkeypatch.setattr(ir, "build_retriever", must_not_run)
    again = ir.evaluate_modes(scifact_slice, lab_settings, ["bm25"], progress=False)
    assert again.results["bm25"]["ndcg@10"] == first.results["bm25"]["ndcg@10"]
    with pytest.raises(AssertionError, match="recomputed"):
        ir.evaluate_modes(scifact_slice, lab_settings, ["bm25"], progress=False, resume=False)
