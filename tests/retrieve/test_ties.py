"""Ties are broken by a stable key at retrieval, so a leg's top-p is a prefix of its top-P: the
ablation grid cuts legs retrieved once at the largest prefetch, the live retrievers ask for top-p."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from rag_lab.index.backend import Hit
from rag_lab.retrieve.bm25 import bm25_ranking
from rag_lab.retrieve.hybrid import HybridRetriever


@pytest.fixture(scope="module")
def tied_bm25():
    """A real bm25s index where most documents score exactly the same for "fee"."""
    import bm25s

    vocab = {"fee": 0, "care": 1, "other": 2}
    rng = random.Random(3)
    corpus = [rng.choice([["fee", "care"], ["fee", "other"], ["other"], ["fee", "care", "care"]]) for _ in range(400)]
    engine = bm25s.BM25()
    engine.index(bm25s.tokenization.Tokenized(ids=[[vocab[t] for t in d] for d in corpus], vocab=vocab),
                 show_progress=False)
    return engine


def test_bm25_ties_follow_corpus_position_and_every_top_p_is_a_prefix(tied_bm25):
    full = bm25_ranking(tied_bm25, ["fee"], 100)
    scores = [s for _, s in full]
    assert len(set(scores)) < len(scores)  # there are ties, and one runs across the cut at 100
    assert scores == sorted(scores, reverse=True)
    for (i, a), (j, b) in zip(full, full[1:]):
        assert a > b or i < j  # equal scores in corpus order
    for p in range(1, 101):
        assert bm25_ranking(tied_bm25, ["fee"], p) == full[:p], p
    # the scores are bm25s's own
    ids, engine_scores = tied_bm25.retrieve([["fee"]], k=100, show_progress=False, return_as="tuple")
    assert sorted(engine_scores[0].tolist()) == pytest.approx(sorted(scores))
    assert bm25_ranking(tied_bm25, [], 10) == []


class TieShufflingEngine:
    """Returns tied points in an order (and, at the cut, a choice) that depends on the limit asked
    for, as engines do; scores: 3 distinct, then 40 points sharing one score."""

    def __init__(self):
        self.points = [(f"p{i:02d}", 1.0 - i / 10) for i in range(3)] + [(f"t{i:02d}", 0.5) for i in range(40)]

    def _ranked(self, limit: int) -> list[Hit]:
        head, tied = self.points[:3], self.points[3:]
        random.Random(limit).shuffle(tied)
        return [Hit(i, s, {}) for i, s in (head + tied)[:limit]]

    def legs(self, dense, sparse, limit, score_threshold=None):
        return self._ranked(limit), self._ranked(limit + 1)


def test_sparse_and_dense_legs_break_ties_by_point_id_at_every_prefetch():
    index = SimpleNamespace(vectors=TieShufflingEngine(), tokenizer=lambda text: ["fee"],
                            embed_model=None)
    full_dense, full_sparse = HybridRetriever(index, prefetch=30).candidate_legs("fee", [0.1, 0.2])
    assert [i for i, _ in full_dense] == ["p00", "p01", "p02"] + [f"t{i:02d}" for i in range(27)]
    for prefetch in (1, 5, 10, 25):
        dense, sparse = HybridRetriever(index, prefetch=prefetch).candidate_legs("fee", [0.1, 0.2])
        assert dense == full_dense[:prefetch] and sparse == full_sparse[:prefetch], prefetch
