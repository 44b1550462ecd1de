"""`rag-lab ask`: JSON = Answer.to_dict(), text view, and the Kendra config error (exit ≠ 0)."""

from __future__ import annotations

import json

import pytest

from rag_lab.cli.main import main
from rag_lab.retrieve.kendra import NOT_CONFIGURED_MESSAGE
from tests.answer.conftest import INCOME_FILE, INCOME_QUESTION, ScriptedLLM


@pytest.fixture
def cli(lab_settings, monkeypatch):
    """main() on the session's settings and index, with a scripted LLM; returns the LLM."""
    import rag_lab.cli.ask as ask
    import rag_lab.cli.commands as commands
    import rag_lab.index.store as store
    import rag_lab.models.llm as llm_module

    llm = ScriptedLLM(script="The limit is $4,106 [Doc 1].")
    monkeypatch.setattr(llm_module, "get_llm", lambda *a, **k: llm)
    for module in (ask, commands):
        monkeypatch.setattr(module, "get_settings", lambda: lab_settings)
    monkeypatch.setattr(store, "close_all", lambda: None)  # main() would close the session's Qdrant client
    return llm


def test_ask_json_is_the_answer(cli, texas_index, capsys) -> None:
    code = main(["ask", "texas_childcare", INCOME_QUESTION, "--mode", "bm25", "--json", "--top-k", "2",
                 "--no-rerank"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer"] == "The limit is $4,106 [Doc 1]." and data["mode"] == "bm25"
    assert data["sources"] == [{"doc": INCOME_FILE, "page": 1, "url": data["sources"][0]["url"]}]
    assert len(data["chunks"]) == 2 and data["usage"]["calls"] == 1
    assert data["rerank"]["status"] == "skipped"


def test_ask_text_with_explain(cli, texas_index, capsys) -> None:
    code = main(["ask", "texas_childcare", INCOME_QUESTION, "--mode", "fusion", "--top-k", "2", "--explain",
                 "--no-rerank"])
    out = capsys.readouterr().out
    assert code == 0
    answer, rest = out.split("\n\nSources:\n", 1)
    assert answer == "The limit is $4,106 [Doc 1]."
    assert rest.startswith(f"  - {INCOME_FILE}, page 1 <https://www.twc.texas.gov/")
    assert "(mode fusion · rerank skipped: disabled; kept top 2 of 2 by retrieval order" in rest
    assert "Chunks given to the LLM" in rest and f" 1. [" in rest and "dense rank" in rest


def test_ask_kendra_not_configured(cli, lab_settings, monkeypatch, capsys) -> None:
    import rag_lab.cli.ask as ask

    unconfigured = lab_settings.model_copy(update={"kendra_index_id": None})
    monkeypatch.setattr(ask, "get_settings", lambda: unconfigured)
    code = main(["ask", "texas_childcare", "anything", "--mode", "kendra"])
    assert code != 0
    assert NOT_CONFIGURED_MESSAGE in capsys.readouterr().err
    assert cli.prompts == []


def test_ask_json_shows_cited_and_retrieved_sources_apart(cli, texas_index, capsys) -> None:
    cli.script = "I cannot tell from these documents."  # cites nothing
    assert main(["ask", "texas_childcare", INCOME_QUESTION, "--mode", "bm25", "--json", "--top-k", "3",
                 "--no-rerank"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cited_sources"] == [] and data["cites"] is False
    assert data["retrieved_sources"] and data["retrieved_sources"][0]["doc"] == INCOME_FILE
    assert data["sources"] == data["retrieved_sources"]  # the documented fallback, visible as such

    cli.script = "The limit is $4,106 [Doc 1]."
    assert main(["ask", "texas_childcare", INCOME_QUESTION, "--mode", "bm25", "--json", "--top-k", "3",
                 "--no-rerank"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["doc"] for s in data["cited_sources"]] == [INCOME_FILE] and data["cites"] is True
    assert data["sources"] == data["cited_sources"]
    assert len(data["retrieved_sources"]) >= len(data["cited_sources"])


def test_ask_with_the_local_model_does_not_rerank_unless_asked(cli, texas_index, lab_settings, capsys) -> None:
    from tests.answer.conftest import by_task

    assert lab_settings.llm_provider == "local"
    cli.script = by_task("The limit is $4,106 [Doc 1].")
    assert main(["ask", "texas_childcare", INCOME_QUESTION, "--mode", "bm25", "--json", "--top-k", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert cli.rerank_prompts == [] and data["rerank"]["status"] == "skipped"
    assert main(["ask", "texas_childcare", INCOME_QUESTION, "--mode", "bm25", "--json", "--top-k", "3",
                 "--rerank"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert cli.rerank_prompts and data["rerank"]["status"] == "applied"


def test_ask_with_a_remote_provider_reranks_by_default(cli, texas_index, lab_settings, monkeypatch, capsys) -> None:
    import rag_lab.cli.ask as ask
    from tests.answer.conftest import by_task

    remote = lab_settings.model_copy(update={"llm_provider": "openai"})
    monkeypatch.setattr(ask, "get_settings", lambda: remote)
    cli.script = by_task("The limit is $4,106 [Doc 1].")
    assert main(["ask", "texas_childcare", INCOME_QUESTION, "--mode", "bm25", "--json", "--top-k", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert cli.rerank_prompts and data["rerank"]["status"] == "applied"


def test_agent_searches_are_shown_in_the_status_line() -> None:
    from rag_lab.answer.types import Answer
    from rag_lab.cli.ask import render_answer

    answer = Answer(answer="It is $4,106.", cited_sources=[], retrieved_sources=[], mode="agent",
                    tool_calls=[{"arguments": {"query": "bi-weekly income"}, "query": "bi-weekly income",
                                 "fallback": False, "top_k": 5, "docs": [1]},
                                {"arguments": {"query": "x"}, "query": "the question", "fallback": True,
                                 "top_k": 5, "docs": []},
                                {"arguments": {}, "query": None, "fallback": False, "top_k": 5, "docs": []}])
    status = render_answer(answer).splitlines()[-1]
    assert status.startswith('(mode agent · searched "bi-weekly income" · searched "the question" (the '
                             "model's query was unusable) · search refused (limit reached) · ")
