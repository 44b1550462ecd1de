"""QueryFusionRetriever's query generation as a tuning lever, driven by a scripted LLM."""

from __future__ import annotations

import re

import pytest

from rag_lab.evaluate.ablation.grid import Candidates, Config, GridSpec, compute_grid
from rag_lab.evaluate.tune.query_gen import fuse_queries, generate_rewrites, rewrite_queries
from tests.answer.conftest import ScriptedLLM


def numbered_rewrites(prompt: str) -> str:
    """Four rewrites (more than asked: QueryFusionRetriever trims), each naming the query."""
    query = re.search(r"Query: (.*)\n", prompt).group(1)
    return "\n".join(f"{query} variant {i}" for i in range(1, 5))


def test_rewrites_come_from_query_fusion_retrievers_own_prompt_and_parsing():
    llm = ScriptedLLM(script=numbered_rewrites)
    from rag_lab.evaluate.tune.query_gen import RewriteCost

    cost = RewriteCost()
    rewrites = generate_rewrites(llm, "infant care rate", 3, cost)
    assert rewrites == ["infant care rate variant 1", "infant care rate variant 2"]  # n − 1, trimmed
    assert len(llm.prompts) == 1 and "Generate 2 search queries" in llm.prompts[0]
    assert cost.calls == 1 and cost.questions == 1 and cost.prompt_chars == len(llm.prompts[0])
    assert generate_rewrites(llm, "anything", 1) == [] and len(llm.prompts) == 1  # n = 1: no LLM call


def test_rewrites_are_cached_a_rerun_asks_nothing(tmp_path):
    llm = ScriptedLLM(script=numbered_rewrites)
    queries = {"q1": "rate for toddlers", "q2": "income limit"}
    texts, cost = rewrite_queries(llm, queries, 2, tmp_path)
    assert texts == {"q1~rewrite0": "rate for toddlers variant 1", "q2~rewrite0": "income limit variant 1"}
    assert cost.per_question()["llm_calls"] == 1.0
    again, cost_again = rewrite_queries(llm, queries, 2, tmp_path)
    assert again == texts and len(llm.prompts) == 2 and cost_again.calls == cost.calls


def test_another_generator_never_reuses_the_cached_rewrites(tmp_path):
    """The cache is keyed by the generator's identity and every input: another model asks again
    (its own rewrites, its own cost); the first model's rewrites stay cached beside them."""
    first = ScriptedLLM(script=numbered_rewrites, model_name="model-a")
    queries = {"q1": "rate for toddlers"}
    texts, _ = rewrite_queries(first, queries, 2, tmp_path)
    other = ScriptedLLM(script=lambda prompt: numbered_rewrites(prompt).replace("variant", "other"), model_name="model-b")
    theirs, cost = rewrite_queries(other, queries, 2, tmp_path)
    assert theirs == {"q1~rewrite0": "rate for toddlers other 1"} and len(other.prompts) == 1 and cost.calls == 1
    same = ScriptedLLM(script=numbered_rewrites, model_name="model-a")
    assert rewrite_queries(same, queries, 2, tmp_path)[0] == texts and same.prompts == []
    # a record written without a key (an older cache) is not trusted
    (tmp_path / "rewrites-2.jsonl").write_text('{"question": "rate for toddlers", "rewrites": ["stale"], "cost": {}}\n')
    fresh = ScriptedLLM(script=numbered_rewrites, model_name="model-a")
    assert rewrite_queries(fresh, queries, 2, tmp_path)[0] == texts and len(fresh.prompts) == 1


def _legs(prefix: str, dense: list[str], other: list[str]) -> dict:
    doc = lambda c: c.split("#")[0]  # noqa: E731
    return {"dense": [(c, doc(c), 1.0 / (i + 1)) for i, c in enumerate(dense)],
            "bm25": [(c, doc(c), 1.0 / (i + 1)) for i, c in enumerate(other)],
            "sparse": [(c, doc(c), 1.0 / (i + 1)) for i, c in enumerate(other)]}


QUESTION = Candidates("q", _legs("q", ["a#1", "a#2", "b#1", "c#1"], ["b#1", "a#1", "d#1", "a#3"]))


@pytest.mark.parametrize("config", [Config("fusion", 60, 4, 1.0, 1.0, 3), Config("hybrid", 1, 2, 1.0, 1.0, 3),
                                    Config("fusion", 5, 4, 0.7, 1.3, 4, 1), Config("fusion", 60, 4, 1.0, 0.0, 2)])
def test_one_query_is_exactly_the_grids_ranking(config):
    grid = compute_grid([QUESTION], GridSpec.single(config))
    doc_of = {c: c.split("#")[0] for leg in QUESTION.legs.values() for c, _, _ in leg}
    assert fuse_queries([QUESTION], config, doc_of) == grid.chunks[config.id]["q"]


def test_a_rewrite_brings_in_what_the_question_missed():
    rewrite = Candidates("q~rewrite0", _legs("r", ["e#1", "a#1"], ["e#1", "b#1"]))
    doc_of = {c: c.split("#")[0] for q in (QUESTION, rewrite) for leg in q.legs.values() for c, _, _ in leg}
    config = Config("fusion", 60, 4, 1.0, 1.0, 3)
    alone = fuse_queries([QUESTION], config, doc_of)
    both = fuse_queries([QUESTION, rewrite], config, doc_of)
    assert "e#1" not in alone and "e#1" in both
    assert both[0] == "a#1"  # in every list near the top: the largest RRF sum
