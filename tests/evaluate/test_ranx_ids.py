"""ranx's numba kernels are typed by the width of the document ids (numpy ``<U{longest}``): rag-lab
gives them fixed-width ids, so a new file-name length costs no compile (it cost 2–70 s per new
length inside the first samples of an eval, the "concurrency 1 is slow" of benchmarks/eval_throughput.py)."""

from __future__ import annotations

import math

from rag_lab.evaluate.ablation.metrics import ir_per_query
from rag_lab.evaluate.retrieval.ir import score_run
from rag_lab.evaluate.retrieval.ranx_ids import fixed_width_ids
from rag_lab.evaluate.run.scorer import ir_scores


def _compiled_types() -> int:
    from ranx.data_structures.common import create_and_sort  # what Run() and Qrels() call

    return len(create_and_sort.signatures)


def test_document_ids_of_new_lengths_compile_nothing_new():
    score_run({"q": {"a.pdf": 1.0}}, {"q": {"a.pdf": 1}})  # the one type: compiled or loaded once
    ir_per_query({"c": {"q": ["a.pdf"]}}, {"q": {"a.pdf": 1}})
    before = _compiled_types()
    for length in (13, 29, 71):  # lengths no other call here used
        doc = "x" * length + ".pdf"
        means, _ = score_run({"q": {"other.pdf": 1.0, doc: 0.5}}, {"q": {doc: 1}})
        assert means["mrr@10"] == 0.5
        assert ir_per_query({"c": {"q": ["o", doc]}}, {"q": {doc: 1}}, metrics=("mrr",))["c"]["mrr"]["q"] == 0.5
    assert ir_scores({"id": "q", "relevant": {"y" * 37: 1}, "contexts": []}) == {"mrr@10": 0.0, "ndcg@10": 0.0}
    assert _compiled_types() == before


def test_scores_are_those_of_the_original_ids():
    run = {"q1": {"long-file-name-of-a-report.pdf": 3.0, "b.pdf": 2.0, "c.pdf": 1.0}, "q2": {"b.pdf": 1.0}}
    qrels = {"q1": {"b.pdf": 1, "c.pdf": 2}, "q2": {"zz.pdf": 1}}
    renamed_run, renamed_qrels = fixed_width_ids(run, qrels)
    assert {len(d) for docs in [*renamed_run.values(), *renamed_qrels.values()] for d in docs} == {9}
    assert renamed_run["q1"]["d00000001"] == 2.0 and renamed_qrels["q1"]["d00000001"] == 1  # b.pdf in both
    means, per_query = score_run(run, qrels, metrics=("mrr@10", "ndcg@10"))
    ideal = 2 / math.log2(2) + 1 / math.log2(3)  # ranx's default nDCG (Järvelin & Kekäläinen): gain = grade
    expected_q1 = (1 / math.log2(3) + 2 / math.log2(4)) / ideal  # b.pdf at rank 2, c.pdf at rank 3
    assert per_query["mrr@10"] == {"q1": 0.5, "q2": 0.0}
    assert math.isclose(per_query["ndcg@10"]["q1"], expected_q1, rel_tol=1e-9)
    assert math.isclose(means["ndcg@10"], expected_q1 / 2, rel_tol=1e-9)


def test_one_metric_gives_its_mean():
    means, per_query = score_run({"q": {"a": 1.0, "b": 0.5}}, {"q": {"b": 1}}, metrics=("mrr@10",))
    assert means == {"mrr@10": 0.5} and per_query == {"mrr@10": {"q": 0.5}}
