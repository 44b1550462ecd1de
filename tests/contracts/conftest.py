"""The retriever contract: one fixture per retriever; every test in this folder runs on each.

Each factory takes ``top_k`` and ``no_match`` and returns a ready retriever. ``no_match=True``
asks for one configured so that :data:`NO_MATCH_QUERY` matches nothing (a gibberish query, plus a
score threshold for the dense leg, whose cosine always finds *something*).
"""

from __future__ import annotations

import pytest

NO_MATCH_QUERY = "zqxjv wkpfy qqzzx"
NO_MATCH_THRESHOLD = 0.95  # cosine; no chunk is this close to gibberish


def _dense(index, top_k, no_match):
    from rag_lab.retrieve.dense import DenseRetriever

    return DenseRetriever(index, top_k=top_k, score_threshold=NO_MATCH_THRESHOLD if no_match else None)


def _bm25(index, top_k, no_match):
    from rag_lab.retrieve.bm25 import BM25Retriever

    return BM25Retriever(index, top_k=top_k)


def _fusion(index, top_k, no_match):
    from rag_lab.retrieve.fusion import FusionRetriever

    return FusionRetriever(index, top_k=top_k, prefetch=20, score_threshold=NO_MATCH_THRESHOLD if no_match else None)


def _hybrid(index, top_k, no_match):
    from rag_lab.retrieve.hybrid import HybridRetriever

    return HybridRetriever(index, top_k=top_k, prefetch=20, score_threshold=NO_MATCH_THRESHOLD if no_match else None)


def _hybrid_explained(index, top_k, no_match):
    from rag_lab.retrieve.hybrid import HybridRetriever

    return HybridRetriever(index, top_k=top_k, prefetch=20, explain=True,
                           score_threshold=NO_MATCH_THRESHOLD if no_match else None)


def _kendra(index, top_k, no_match):
    from tests.retrieve.kendra_stub import contract_kendra_retriever

    return contract_kendra_retriever(top_k=top_k, no_match_query=NO_MATCH_QUERY)


FACTORIES = {
    "dense": _dense, "bm25": _bm25, "fusion": _fusion, "hybrid": _hybrid,
    "hybrid-explain": _hybrid_explained, "kendra": _kendra,
}


@pytest.fixture(params=sorted(FACTORIES))
def make_retriever(request, texas_index):
    factory = FACTORIES[request.param]

    def make(top_k: int = 5, no_match: bool = False):
        return factory(texas_index, top_k, no_match)

    make.mode = request.param
    return make
