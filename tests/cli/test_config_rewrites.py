"""A config file with num_queries > 1: `search`, `ask` and `eval` run QueryFusionRetriever's rewrites
(one generation call per question, its prompt) with the configured generator, here a scripted LLM."""

from __future__ import annotations

import json

import pytest

from rag_lab.retrieve.tuned_config import TunedConfig, write_tuned_config
from tests.answer.conftest import ScriptedLLM
from tests.cli.test_cli import cli  # noqa: F401  (the in-process CLI fixture)
from tests.evaluate.conftest import quoting_answer

REWRITE_PROMPT = "Generate 2 search queries"


def rewrites_then_answers(prompt: str) -> str:
    if "search queries" in prompt:
        return "income eligibility limits\nparent share of cost"
    return quoting_answer(prompt)


@pytest.fixture
def generator(monkeypatch):
    llm = ScriptedLLM(script=rewrites_then_answers)
    monkeypatch.setattr("rag_lab.models.llm.get_llm", lambda settings, **kw: llm)
    return llm


@pytest.mark.parametrize("mode", ["fusion", "hybrid"])
def test_search_with_num_queries_asks_the_generator_for_rewrites(cli, generator, tmp_path, mode):  # noqa: F811
    config = write_tuned_config(tmp_path / "rw.toml", TunedConfig(mode, 10, 25, 1.0, 1.0, 1, 5, num_queries=3))
    question = "What is the maximum bi-weekly income for a family of 5?"
    code, with_rewrites, _ = cli("search", "texas_childcare", question, "--config", str(config), "--json")
    assert code == 0 and len(json.loads(with_rewrites)) >= 1
    assert [p for p in generator.prompts if REWRITE_PROMPT in p] and question in generator.prompts[0]
    plain = write_tuned_config(tmp_path / "plain.toml", TunedConfig(mode, 10, 25, 1.0, 1.0, 1, 5))
    calls = len(generator.prompts)
    code, without, _ = cli("search", "texas_childcare", question, "--config", str(plain), "--json")
    assert code == 0 and len(generator.prompts) == calls  # num_queries 1: no LLM call
    assert len(json.loads(without)) == len(json.loads(with_rewrites))  # capped, cut at top-k alike


def test_ask_and_eval_with_num_queries_rewrite_before_answering(cli, generator, tmp_path):  # noqa: F811
    config = write_tuned_config(tmp_path / "rw.toml", TunedConfig("hybrid", 10, 25, 1.0, 1.0, 1, 5, num_queries=2))
    code, out, _ = cli("ask", "texas_childcare", "What is the infant care rate?", "--config", str(config), "--json")
    assert code == 0 and json.loads(out)["mode"] == "hybrid"
    kinds = ["rewrite" if "search queries" in p else "answer" for p in generator.prompts]
    assert kinds == ["rewrite", "answer"]  # one rewrite call, then the answer
    run = tmp_path / "eval"
    code, _, _ = cli("eval", "texas_childcare", "--modes", "hybrid", "--limit", "1", "--config", str(config),
                     "--out", str(run))
    assert code == 0
    assert json.loads((run / "manifest.json").read_text())["config"]["params"]["num_queries"] == 2
    assert sum("search queries" in p for p in generator.prompts) == 2  # the eval's question was rewritten too
