"""The vectorised grid equals the project's RRF (rrf_term / explain_fusion + stable sort) for every
configuration; ranx and RAGAS scores per distinct ranking equal scoring each run on its own."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from rag_lab.evaluate.retrieval import ir
from rag_lab.evaluate.ablation.grid import Candidates, Config, GridSpec, compute_grid
from rag_lab.evaluate.ablation.metrics import context_per_query, ir_per_query
from rag_lab.fusion import explain_fusion, rank_fused, rrf_term, rrf_terms


def test_rrf_terms_is_rrf_term_vectorised():
    ranks = np.array([1, 2, 3, 10, 100, np.inf])
    for k, weight in itertools.product((0, 1, 60), (0.5, 1.0, 1.3, 0.0)):
        expected = [rrf_term(int(r), k, weight) if np.isfinite(r) else 0.0 for r in ranks]
        assert rrf_terms(ranks, k, weight) == pytest.approx(expected)
    with pytest.raises(ValueError, match="from 1"):
        rrf_terms([0], 60)


def _random_questions(n: int, seed: int) -> list[Candidates]:
    rng = random.Random(seed)
    questions = []
    for q in range(n):
        pool = [f"c{i}" for i in range(40)]
        dense = rng.sample(pool, rng.randint(0, 30))
        sparse = rng.sample(pool, rng.randint(0, 30))
        questions.append(Candidates(f"q{q}", {
            "dense": [(c, f"doc{int(c[1:]) % 7}", 1.0 - i / 100) for i, c in enumerate(dense)],
            "bm25": [(c, f"doc{int(c[1:]) % 7}", 30.0 - i) for i, c in enumerate(sparse)],
            "sparse": [(c, f"doc{int(c[1:]) % 7}", 9.0 - i / 10) for i, c in enumerate(reversed(sparse))],
        }))
    return questions


def _expected(question: Candidates, config: Config, sparse_leg: str) -> list[str]:
    dense = [(c, s) for c, _, s in question.legs["dense"][: config.prefetch]]
    sparse = [(c, s) for c, _, s in question.legs[sparse_leg][: config.prefetch]]
    explained = explain_fusion(dense, sparse, config.k, config.dense_weight, config.sparse_weight)
    return [c for c, _ in rank_fused(explained)][: config.top_k]  # a 0-weight leg's items stay candidates


def test_grid_equals_explain_fusion_for_every_configuration():
    spec = GridSpec(modes=("fusion", "hybrid"), fusion_k=(0, 1, 2, 60), prefetch=(3, 10, 25),
                    top_k=(1, 5, 12), weights=((1.0, 1.0), (0.7, 1.3), (2.0, 0.5), (0.0, 1.0), (1.0, 0.0)))
    questions = _random_questions(12, seed=1)
    grid = compute_grid(questions, spec)
    assert len(grid.configs) == 2 * 4 * 3 * 5 * 3
    for config in grid.configs:
        sparse_leg = "bm25" if config.mode == "fusion" else "sparse"
        for q in questions:
            assert list(grid.chunks[config.id][q.qid]) == _expected(q, config, sparse_leg), (config.id, q.qid)
            docs = grid.docs[config.id][q.qid]
            doc_of = {c: d for leg in q.legs.values() for c, d, _ in leg}
            assert list(docs) == list(dict.fromkeys(doc_of[c] for c in grid.chunks[config.id][q.qid]))


def test_a_zero_weight_leg_adds_nothing_but_its_items_stay_candidates():
    # weight 0:1 — dense items score 0 yet follow the sparse ones in dense order (Qdrant's RRF and the
    # fusion retriever keep them); 1:0 — sparse-only items score 0, in sparse order, even when the
    # dense leg ranks them past the prefetch (they are then absent from it: no dense rank)
    q = Candidates("q", {"dense": [("d1", "A", 0.9), ("d2", "B", 0.8), ("s2", "C", 0.7), ("s1", "D", 0.6)],
                         "bm25": [("s1", "D", 3.0), ("s2", "C", 2.0), ("s3", "E", 1.0)]})
    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(2, 4), top_k=(6,), weights=((0.0, 1.0), (1.0, 0.0)))
    grid = compute_grid([q], spec)
    assert grid.chunks["fusion|k=60|p=4|w=0:1|top=6"]["q"] == ("s1", "s2", "s3", "d1", "d2")
    assert grid.chunks["fusion|k=60|p=2|w=0:1|top=6"]["q"] == ("s1", "s2", "d1", "d2")
    assert grid.chunks["fusion|k=60|p=2|w=1:0|top=6"]["q"] == ("d1", "d2", "s1", "s2")
    assert grid.chunks["fusion|k=60|p=4|w=1:0|top=6"]["q"] == ("d1", "d2", "s2", "s1", "s3")


def test_ties_keep_dense_first_order_in_both_modes():
    # z and a tie (each first in one leg): the dense leg's item comes first in fusion and hybrid
    # alike, whatever the ids' order (the one tie rule, rag_lab.fusion.tie_key)
    q = Candidates("q", {"dense": [("z", "Z", 0.9)], "bm25": [("a", "A", 3.0)], "sparse": [("a", "A", 2.0)]})
    grid = compute_grid([q], GridSpec(modes=("fusion", "hybrid"), fusion_k=(60,), prefetch=(5,), top_k=(2,)))
    assert grid.chunks["fusion|k=60|p=5|w=1:1|top=2"]["q"] == ("z", "a")
    assert grid.chunks["hybrid|k=60|p=5|w=1:1|top=2"]["q"] == ("z", "a")


def test_grid_spec_rejects_bad_values():
    with pytest.raises(ValueError, match="modes"):
        GridSpec(modes=("dense",))
    with pytest.raises(ValueError, match="prefetch"):
        GridSpec(prefetch=(0, 10))
    with pytest.raises(ValueError, match="at least one"):
        GridSpec(top_k=())
    assert GridSpec(prefetch=(10, 25)).depth == 25


def test_one_ranx_evaluate_equals_scoring_each_run_alone():
    qrels = {"q1": {"d1": 1, "d3": 1}, "q2": {"d2": 1}, "q3": {"d9": 1}}
    docs = {
        "A": {"q1": ("d2", "d1"), "q2": ("d2",), "q3": ()},
        "B": {"q1": ("d1", "d3", "d4"), "q2": ("d5", "d2"), "q3": ("d8",)},
        "C": {"q1": ("d2", "d1"), "q2": ("d2",), "q3": ("d9",)},  # shares two rankings with A
    }
    scores = ir_per_query(docs, qrels, ["ndcg", "recall", "mrr"])
    for config, per_q in docs.items():
        run = {q: {d: float(len(r) - i) for i, d in enumerate(r)} for q, r in per_q.items()}
        _, alone = ir.score_run(run, qrels, ["ndcg", "recall", "mrr"])
        for metric in ("ndcg", "recall", "mrr"):
            assert scores[config][metric] == pytest.approx(alone[metric]), (config, metric)
    assert scores["A"]["mrr"] == pytest.approx({"q1": 0.5, "q2": 1.0, "q3": 0.0})


def test_ragas_id_context_metrics_known_values():
    docs = {"A": {"q1": ("x.pdf", "y.pdf"), "q2": ("z.pdf",), "q3": ("x.pdf",)}}
    refs = {"q1": ["x.pdf"], "q2": ["x.pdf", "z.pdf"], "q3": []}
    scores = context_per_query(docs, refs)["A"]
    assert scores["id_context_precision"] == pytest.approx({"q1": 0.5, "q2": 1.0})
    assert scores["id_context_recall"] == pytest.approx({"q1": 1.0, "q2": 0.5})  # q3 has no reference


def test_grid_metrics_are_cut_at_the_configurations_top_k():
    """A worked case: top-3 chunks from two documents, both relevant, five relevant in all.
    Uncut ranx gave precision 2/2 = 1.0 and nDCG 0.553 (ideal over all five); at the top-k (3) it is
    P@3 = 2/3 and nDCG@3 = (1 + 1/log2 3) / (1 + 1/log2 3 + 1/2) = 0.765."""
    from rag_lab.evaluate.ablation.metrics import grid_per_query

    q = Candidates("q", {"dense": [("a1", "A", 0.9), ("a2", "A", 0.8), ("b1", "B", 0.7), ("x1", "X", 0.6)],
                         "bm25": [("a1", "A", 5.0), ("a2", "A", 4.0), ("b1", "B", 3.0)]})
    grid = compute_grid([q], GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(4,), top_k=(3, 4)))
    top3, top4 = "fusion|k=60|p=4|w=1:1|top=3", "fusion|k=60|p=4|w=1:1|top=4"
    assert grid.docs[top3]["q"] == ("A", "B") and grid.docs[top4]["q"] == ("A", "B", "X")
    qrels = {"q": {d: 1 for d in ("A", "B", "C", "D", "E")}}
    scores = grid_per_query(grid, qrels)
    assert set(scores[top3]) == {"ndcg@top_k", "precision@top_k", "recall@top_k", "mrr@top_k"}
    ideal3 = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    assert scores[top3]["precision@top_k"]["q"] == pytest.approx(2 / 3)
    assert scores[top3]["ndcg@top_k"]["q"] == pytest.approx((1 + 1 / np.log2(3)) / ideal3)
    assert scores[top3]["ndcg@top_k"]["q"] == pytest.approx(0.765, abs=5e-4)
    assert scores[top3]["recall@top_k"]["q"] == pytest.approx(2 / 5) and scores[top3]["mrr@top_k"]["q"] == 1.0
    # top-4: the same two relevant documents and X; P@4 = 2/4, the ideal ranking holds 4 of the 5
    assert scores[top4]["precision@top_k"]["q"] == pytest.approx(2 / 4)
    assert scores[top4]["ndcg@top_k"]["q"] == pytest.approx((1 + 1 / np.log2(3)) / (ideal3 + 1 / np.log2(5)))
