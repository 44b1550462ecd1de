"""Same semantics on every engine: the same queries through qdrant-client's local mode, Qdrant Edge
and the client-side fusion formula give the same rankings (ties aside), on one real build each
(MiniLM embeddings, the lab's domain tokenizer and sparse BM25 weights)."""

from __future__ import annotations

import pytest

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.fusion import explain_fusion, qdrant_rrf_k, rank_fused
from rag_lab.index import CorpusIndex, build_index
from rag_lab.index.backend import Hit
from rag_lab.retrieve.hybrid import HybridRetriever

TOPICS = ["heron", "kettle", "train", "lighthouse", "orchard", "glacier", "violin", "harbour", "meteor", "bakery"]
PLACES = ["quarry lake", "old mill", "north station", "rocky cape", "valley farm", "mountain pass",
          "concert hall", "fishing port", "desert sky", "market square"]
ALL = 40  # more than the corpus's 34 chunks
QUERIES = ["heron by the quarry lake", "a violin in the concert hall", "bread at the market square bakery",
           "meteor over the desert", "trains leaving the north station at nine", "$4,106 per month"]


def _corpus(folder):
    folder.mkdir(parents=True)
    n = 0
    for i, topic in enumerate(TOPICS):
        for j, place in enumerate(PLACES):
            if (i + j) % 3:  # 60-odd documents, overlapping vocabularies
                continue
            filler = " ".join(f"ref{n}x{m}" for m in range(n))  # every length differs: few sparse ties
            text = (f"Notes {n}: the {topic} near the {place}. Visitors describe the {topic} "
                    f"and the {place} in season {j}. Budget ${1000 + 37 * n:,} per month. {filler}")
            (folder / f"doc{n:03d}.txt").write_text(text, encoding="utf-8")
            n += 1
    return folder


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    root = tmp_path_factory.mktemp("engines")
    dataset = resolve_dataset(_corpus(root / "corpus"))
    indexes = {}
    for backend in ("edge", "local"):
        settings = load_settings(data_dir=root / f"lab-{backend}", vector_backend=backend)
        build_index(dataset, settings, progress=False)
        indexes[backend] = CorpusIndex.open(dataset, settings)
    return indexes


def _files(index) -> dict[str, str]:
    """point id → file name (each file is one chunk): how points are matched across builds."""
    return {h_id: p["filename"] for h_id, p in index.vectors.payloads(
        [e["node_id"] for e in index.bm25.corpus]).items()}


def _untied(hits, files):
    """The ranking as file names, ties ordered by name: engines may order equal scores differently."""
    return [files[h.id] for h in sorted(hits, key=lambda h: (-round(h.score, 5), files[h.id]))]


def test_the_two_builds_hold_the_same_points(engines):
    edge, local = engines["edge"], engines["local"]
    assert edge.backend == "edge" and local.backend == "local"
    assert edge.vectors.count() == local.vectors.count() == edge.manifest.n_chunks == 34


@pytest.mark.parametrize("query", QUERIES)
def test_dense_sparse_and_rrf_rankings_are_equal_across_engines(engines, query):
    edge, local = engines["edge"], engines["local"]
    files = {name: _files(index) for name, index in engines.items()}
    dense = edge.embed_model.get_query_embedding(query)
    retriever = HybridRetriever(edge, prefetch=20)
    _, sparse = retriever._query_vectors(query)

    # Depth ALL (> 34 points): no cut inside a group of tied scores, so "ties aside" is exact.
    # dense: HNSW (edge) vs exact brute force (local) — equal on a corpus this small
    e_dense, l_dense = edge.vectors.dense(dense, ALL), local.vectors.dense(dense, ALL)
    assert _untied(e_dense, files["edge"]) == _untied(l_dense, files["local"])
    assert [h.score for h in e_dense] == pytest.approx([h.score for h in l_dense], abs=1e-5)
    if sparse is not None:
        e_sparse, l_sparse = edge.vectors.sparse(sparse, ALL), local.vectors.sparse(sparse, ALL)
        assert e_sparse, "the sparse leg must match something for these queries"
        assert _untied(e_sparse, files["edge"]) == _untied(l_sparse, files["local"])
        assert [h.score for h in e_sparse] == pytest.approx([h.score for h in l_sparse], rel=1e-4)

    for k, weights in ((60, (1.0, 1.0)), (2, (1.0, 1.0)), (10, (0.7, 1.3))):
        fused = {}
        for name, index in engines.items():
            hits = index.vectors.rrf(dense, sparse, ALL, qdrant_rrf_k(k), weights, ALL)
            d_leg, s_leg = index.vectors.legs(dense, sparse, ALL)
            formula = explain_fusion([(h.id, h.score) for h in d_leg], [(h.id, h.score) for h in s_leg], k, *weights)
            by_formula = [Hit(i, e.fused_score) for i, e in formula.items()]
            # the engine's own RRF == the fusion formula over the engine's legs (ranking and scores)
            assert _untied(hits, files[name]) == _untied(by_formula, files[name])
            assert sorted(h.score for h in hits) == pytest.approx(sorted(h.score for h in by_formula), rel=1e-5)
            fused[name] = _untied(hits, files[name])
        assert fused["edge"] == fused["local"]


def test_hybrid_retriever_returns_the_same_chunks_on_both_engines(engines):
    for query in QUERIES:
        got = {name: [(round(r.score, 5), r.node.metadata["filename"])
                      for r in HybridRetriever(index, top_k=ALL, prefetch=ALL).retrieve(query)]
               for name, index in engines.items()}
        assert sorted(got["edge"], key=lambda x: (-x[0], x[1])) == sorted(got["local"], key=lambda x: (-x[0], x[1]))
        explained = HybridRetriever(engines["edge"], top_k=ALL, prefetch=ALL, explain=True).retrieve(query)
        assert [(round(r.score, 5), r.node.metadata["filename"]) for r in explained] == got["edge"]


def test_ties_follow_the_one_rule_in_plain_and_explained_hybrid_on_both_engines(engines):
    """With a shallow prefetch, equal fused scores are common (an item 3rd in the dense leg only and
    one 3rd in the sparse leg only). Plain hybrid (fused inside the engine), explained hybrid and
    the formula ranked by the tie rule (rank_fused: dense rank, then sparse rank) give the same
    order, and so do both engines."""
    ties = 0
    for query in QUERIES:
        by_engine = {}
        for name, index in engines.items():
            plain = HybridRetriever(index, top_k=8, prefetch=5).retrieve(query)
            explained = HybridRetriever(index, top_k=8, prefetch=5, explain=True).retrieve(query)
            dense, sparse = HybridRetriever(index, top_k=8, prefetch=5).candidate_legs(query)
            expected = [i for i, _ in rank_fused(explain_fusion(dense, sparse, 60))][:8]
            assert [r.node.node_id for r in plain] == [r.node.node_id for r in explained] == expected, (name, query)
            scores = [round(r.score, 9) for r in explained]
            ties += len(scores) - len(set(scores))
            by_engine[name] = [r.node.metadata["filename"] for r in plain]
        assert by_engine["edge"] == by_engine["local"], query
    assert ties > 0, "the queries must produce tied fused scores for this test to mean anything"


def test_candidate_legs_are_the_engines_legs(engines):
    index = engines["edge"]
    retriever = HybridRetriever(index, top_k=5, prefetch=12)
    dense, sparse = retriever.candidate_legs("heron by the quarry lake")
    assert len(dense) == 12 and all(isinstance(i, str) and isinstance(s, float) for i, s in dense)
    assert sparse and [s for _, s in sparse] == sorted((s for _, s in sparse), reverse=True)
    vector = index.embed_model.get_query_embedding("heron by the quarry lake")
    assert [i for i, _ in dense] == [h.id for h in index.vectors.dense(vector, 12)]


def test_an_open_edge_index_survives_close_all(engines):
    """A CLI command run in a notebook's process closes every shard; open indexes reopen theirs."""
    from rag_lab.index.store import close_all

    index = engines["edge"]
    vector = index.embed_model.get_query_embedding("heron by the quarry lake")
    before = [h.id for h in index.vectors.dense(vector, 5)]
    close_all()
    assert [h.id for h in index.vectors.dense(vector, 5)] == before
    assert index.vectors.count() == len(index.bm25.corpus)


def test_building_one_engine_keeps_the_other_engines_bm25(tmp_path):
    """Both engines' builds share a dataset's index folder; one build's clean-up must not delete
    the BM25 index the other engine's manifest names."""
    dataset = resolve_dataset(_corpus(tmp_path / "corpus"))
    edge, local = (load_settings(data_dir=tmp_path / "lab", vector_backend=b) for b in ("edge", "local"))
    build_index(dataset, edge, progress=False)
    build_index(dataset, local, progress=False)
    build_index(dataset, local, progress=False, force=True)  # a rebuild cleans up older generations
    for settings in (edge, local):
        index = CorpusIndex.open(dataset, settings)
        assert len(index.bm25.corpus) == index.vectors.count() > 0
