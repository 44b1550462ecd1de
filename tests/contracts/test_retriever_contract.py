"""Every retriever honours the same contract (see README.md here for how to add one)."""

from __future__ import annotations

import pytest

from rag_lab.retrieve import REQUIRED_METADATA
from rag_lab.retrieve.registry import needs_dataset
from tests.contracts.conftest import AGENT_TOOL, NO_MATCH_QUERY

QUERY = "maximum parent share of cost for a family of 3"


def _ids(results):
    return [r.node.node_id for r in results]


@pytest.mark.parametrize("top_k", [1, 3, 7])
def test_at_most_top_k(make_retriever, top_k):
    results = make_retriever(top_k=top_k).retrieve(QUERY)
    assert 1 <= len(results) <= top_k


def test_scores_non_increasing(make_retriever):
    scores = [r.score for r in make_retriever(top_k=10).retrieve(QUERY)]
    assert all(isinstance(s, float) for s in scores)
    assert all(a >= b for a, b in zip(scores, scores[1:])), scores


def test_required_metadata_present(make_retriever):
    for result in make_retriever().retrieve(QUERY):
        missing = [k for k in REQUIRED_METADATA if k not in result.node.metadata]
        assert not missing, f"missing {missing}"
        assert result.node.metadata["doc_id"] and result.node.metadata["filename"]
        assert result.node.get_content().strip()


def test_same_query_same_result_and_stable_ids(make_retriever):
    retriever = make_retriever(top_k=5)
    first, second = retriever.retrieve(QUERY), retriever.retrieve(QUERY)
    assert _ids(first) == _ids(second)
    assert [r.score for r in first] == [r.score for r in second]
    # ids are stable across retriever instances too
    assert _ids(make_retriever(top_k=5).retrieve(QUERY)) == _ids(first)
    assert len(set(_ids(first))) == len(first), "no duplicates"


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_a_clear_value_error(make_retriever, query):
    with pytest.raises(ValueError, match="query is empty"):
        make_retriever().retrieve(query)


@pytest.mark.parametrize("top_k", [0, -3])
def test_top_k_below_one_is_a_value_error(make_retriever, top_k):
    if make_retriever.subject.through == AGENT_TOOL:
        # A model's bad top_k must not end its turn: the tool clamps it to 1 (and 20 at most).
        assert len(make_retriever(top_k=top_k).retrieve(QUERY)) == 1
        return
    with pytest.raises(ValueError, match="top_k"):
        make_retriever(top_k=top_k)


def test_no_match_is_an_empty_list(make_retriever):
    assert make_retriever(no_match=True).retrieve(NO_MATCH_QUERY) == []


def _mentions_share_of_cost(results) -> bool:
    return any("share of cost" in " ".join(r.node.get_content().lower().split()) for r in results)


def test_unicode_query(make_retriever):
    # Non-Latin text and emoji around words the corpus holds ("parent share of cost"): the
    # retriever must still find them, not fail or come back empty.
    results = make_retriever().retrieve("¿Cuál es el límite de ingresos? 家庭 — parent share of cost 🚸")
    assert 1 <= len(results) <= 5
    for result in results:
        assert result.node.get_content().strip()
    if needs_dataset(make_retriever.mode):  # a stubbed service answers with canned passages
        assert _mentions_share_of_cost(results)


def test_very_long_query(make_retriever):
    query = " ".join([QUERY] * 2000)  # ≈ 100k characters, cut by the retriever, still matching
    results = make_retriever(top_k=3).retrieve(query)
    assert len(results) == 3
    if needs_dataset(make_retriever.mode):
        assert _mentions_share_of_cost(results)


def test_a_precomputed_query_embedding_gives_the_same_results(make_retriever, texas_index):
    """A QueryBundle carrying the query's embedding (batched by the caller) is used as is, with the
    same results; a wrong vector changes the dense-based modes' results (so it is really used)."""
    from llama_index.core.schema import QueryBundle

    retriever = make_retriever(top_k=5)
    vector = texas_index.embed_model.get_query_embedding(QUERY)
    plain = retriever.retrieve(QUERY)
    given = retriever.retrieve(QueryBundle(QUERY, embedding=vector))
    assert _ids(given) == _ids(plain)
    if getattr(retriever, "embeds_queries", False) and make_retriever.mode == "dense":
        other = texas_index.embed_model.get_query_embedding("vacation policy for staff holidays")
        assert _ids(retriever.retrieve(QueryBundle(QUERY, embedding=other))) != _ids(plain)
