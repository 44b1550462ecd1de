import pytest

from rag_lab.fusion import explain_fusion, qdrant_rrf_k, rrf_fuse, rrf_term
from rag_lab.fusion.score import leg_contributions, scale_scores


def test_rrf_term_counts_ranks_from_one():
    assert rrf_term(1, k=60) == 1 / 61
    assert rrf_term(3, k=0) == 1 / 3
    # weights divide ranks (Qdrant's weighted RRF): 1 / (k + rank / w)
    assert rrf_term(2, k=10, weight=0.5) == 1 / (10 + 4)
    assert rrf_term(2, k=10, weight=2.0) == 1 / 11
    assert rrf_term(1, k=10, weight=0.0) == 0.0
    with pytest.raises(ValueError):
        rrf_term(0)


def test_weighted_terms_equal_qdrants_formula():
    # qdrant_client.hybrid.fusion: 1 / ((pos + 1) / w + k_q - 1) with pos from 0
    from qdrant_client.hybrid.fusion import reciprocal_rank_fusion
    from qdrant_client.models import ScoredPoint

    legs = [[ScoredPoint(id=i, version=0, score=1.0) for i in ids] for ids in ([1, 2, 3], [3, 4, 1])]
    fused = reciprocal_rank_fusion(legs, limit=10, ranking_constant_k=qdrant_rrf_k(10), weights=[0.7, 1.3])
    ours = dict(rrf_fuse({"d": [1, 2, 3], "s": [3, 4, 1]}, k=10, weights={"d": 0.7, "s": 1.3}))
    assert {p.id: p.score for p in fused} == pytest.approx(ours, rel=1e-12)


def test_qdrant_k_conversion_gives_the_same_terms():
    # Qdrant: 1 / (k_q + rank0); ours: 1 / (k + rank1)
    for k in (0, 2, 60):
        for rank0 in range(5):
            assert 1 / (qdrant_rrf_k(k) + rank0) == rrf_term(rank0 + 1, k)


def test_rrf_fuse_exact_values_and_weights():
    fused = dict(rrf_fuse({"a": ["x", "y"], "b": ["y", "z"]}, k=1))
    assert fused == {"x": 1 / 2, "y": 1 / 3 + 1 / 2, "z": 1 / 3}
    weighted = dict(rrf_fuse({"a": ["x"], "b": ["x"]}, k=0, weights={"a": 2.0, "b": 0.5}))
    assert weighted == {"x": 1 / 0.5 + 1 / 2}
    # duplicates inside one list count once, at the best rank
    assert dict(rrf_fuse({"a": ["x", "x", "y"]}, k=0)) == {"x": 1.0, "y": 0.5}


def test_explanation_terms_sum_to_fused_score():
    dense = [("d1", 0.9), ("d2", 0.8), ("d3", 0.7)]
    sparse = [("d3", 12.0), ("d4", 7.0)]
    ex = explain_fusion(dense, sparse, k=60, dense_weight=1.0, sparse_weight=2.0)
    assert ex["d3"].source == "both" and ex["d3"].dense_rank == 3 and ex["d3"].sparse_rank == 1
    assert ex["d3"].fused_score == ex["d3"].dense_term + ex["d3"].sparse_term == 1 / 63 + 1 / (60 + 1 / 2)
    assert ex["d1"].source == "dense_only" and ex["d1"].sparse_rank is None and ex["d1"].sparse_term == 0.0
    assert ex["d4"].source == "sparse_only" and ex["d4"].sparse_score == 7.0 and ex["d4"].dense_score is None
    fused = dict(rrf_fuse({"dense": [d for d, _ in dense], "sparse": [s for s, _ in sparse]}, k=60,
                          weights={"dense": 1.0, "sparse": 2.0}))
    assert {i: e.fused_score for i, e in ex.items()} == fused


def test_score_scaling():
    assert scale_scores([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    assert scale_scores([5.0, 5.0]) == [1.0, 1.0]
    assert scale_scores([]) == []
    dist = scale_scores([1.0, 3.0], dist_based=True)  # mean 2, std 1 → range [-1, 5]
    assert dist == [pytest.approx(2 / 6), pytest.approx(4 / 6)]
    assert leg_contributions([("a", 1.0), ("b", 3.0), ("a", 0.0)], weight=2.0) == {"a": pytest.approx(2 / 3), "b": 2.0}
