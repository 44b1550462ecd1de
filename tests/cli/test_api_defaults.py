"""The Python API's defaults are the CLI's: rerank (off for the local model, on for remote
providers), top-k / top-n, modes, compression. A flag left out and an argument left out mean the same."""

from __future__ import annotations

import inspect

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import BaseRetriever

from rag_lab import api
from rag_lab.answer import build_engine, make_answerer
from rag_lab.answer.engine import DEFAULT_TOP_K
from rag_lab.answer.rerank import DEFAULT_TOP_N
from rag_lab.cli.ask import rerank_default
from rag_lab.cli.main import build_parser
from rag_lab.evaluate.run.runner import run_evaluation


class _NoRetriever(BaseRetriever):
    """build_engine only stores the retriever; these tests never query."""

    def _retrieve(self, query_bundle):
        return []


@pytest.fixture(params=["local", "openai"])
def provider_settings(request, lab_settings):
    return lab_settings.model_copy(update={"llm_provider": request.param})


def test_rerank_defaults_to_the_cli_rule_everywhere(provider_settings):
    cli = rerank_default(None, provider_settings)  # `rag-lab ask/eval/chat` without --rerank/--no-rerank
    assert cli is (provider_settings.llm_provider != "local")
    assert api.defaults(provider_settings)["rerank"] is cli
    for function in (make_answerer, build_engine, run_evaluation, api.answerer):
        assert inspect.signature(function).parameters["rerank"].default is None, function
    engine = build_engine("dense", provider_settings, retriever=_NoRetriever(), llm=MockLLM())
    assert (engine.reranker is not None) is cli
    answerer = api.answerer(None, mode="fusion", settings=provider_settings, retriever=_NoRetriever(), llm=MockLLM())
    assert (answerer.engine.reranker is not None) is cli
    # the flags, when given, win in both
    assert rerank_default(True, provider_settings) is True and rerank_default(False, provider_settings) is False
    forced = build_engine("dense", provider_settings, rerank=not cli, retriever=_NoRetriever(), llm=MockLLM())
    assert (forced.reranker is not None) is (not cli)


def test_top_k_top_n_compression_and_modes_match_the_commands(lab_settings):
    parser = build_parser()
    defaults = api.defaults(lab_settings)
    engine = build_engine("dense", lab_settings, retriever=_NoRetriever(), llm=MockLLM())
    assert (engine.top_n, DEFAULT_TOP_N, DEFAULT_TOP_K) == (defaults["answer_top_n"], 7, defaults["answer_top_k"])
    assert engine.context_lines == lab_settings.context_lines == defaults["context_lines"]  # compression
    ask = parser.parse_args(["ask", "texas_childcare", "q"])
    search = parser.parse_args(["search", "texas_childcare", "q"])
    assert ask.top_k is None and ask.top_n is None  # None → the engine's defaults above, in both
    from rag_lab.cli.settings import resolved_mode

    assert ask.mode is None and search.mode is None  # no --mode: the --config file's mode, else the default
    assert resolved_mode(ask) == resolved_mode(search) == defaults["mode"]
    for function in (api.ask, api.answerer, api.search):  # no mode= either: the config's mode, else the same default
        assert inspect.signature(function).parameters["mode"].default is None, function
    assert api._config_and_mode(None, None)[1] == defaults["mode"]
    assert search.top_k is None and inspect.signature(api.search).parameters["top_k"].default is None
    from rag_lab.cli.commands import SEARCH_TOP_K

    assert SEARCH_TOP_K == defaults["search_top_k"]
    from rag_lab.cli.settings import configured_modes

    for command, modes in (("eval", api.EVAL_MODES), ("ir", api.IR_MODES)):  # no --modes, no --config: every mode
        args = parser.parse_args([command, "texas_childcare"])
        assert args.modes is None and configured_modes(args, modes) == list(modes) == ["dense", "bm25", "fusion", "hybrid"]
    assert inspect.signature(api.evaluate).parameters["modes"].default is None  # likewise: the config's, else all
    assert inspect.signature(api.ir).parameters["modes"].default is None


def test_search_from_python_equals_the_command(lab_cli, lab_settings, texas_index):
    import json

    from rag_lab.retrieve.records import results_json

    for mode in ("bm25", "dense"):  # dense fills the default top-k; bm25 returns only chunks sharing a term
        code, out, _ = lab_cli("search", "texas_childcare", "income limit for a family of 5", "--mode", mode, "--json")
        assert code == 0
        results = api.search("texas_childcare", "income limit for a family of 5", mode=mode, settings=lab_settings)
        assert 1 <= len(results) <= api.SEARCH_TOP_K
        assert results_json(results) == json.loads(out), mode
    assert len(results) == api.SEARCH_TOP_K


def test_modes_and_metrics_as_a_string_are_the_commands_comma_separated_names():
    assert api._names("bm25", "modes") == ["bm25"]
    assert api._names("bm25, hybrid", "modes") == ["bm25", "hybrid"]
    assert api._names(("dense",), "modes") == ["dense"] and api._names(None, "modes") is None
    with pytest.raises(TypeError, match="modes must be a list of names"):
        api._names(3, "modes")


@pytest.mark.parametrize(("keywords", "message"), [
    ({"retry_failed": True}, r"--retry-failed \(retry_failed=True\) continues a run"),
    ({"max_cost": -1}, r"--max-cost \(max_cost\) must be a number ≥ 0"),
    ({"out": ""}, "out is empty")])
def test_evaluate_refuses_what_the_command_refuses_before_any_work(lab_settings, keywords, message):
    from rag_lab.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        api.evaluate("texas_childcare", ["bm25"], settings=lab_settings, **keywords)


def test_wrong_queries_counts_and_modes_fail_with_one_clear_message(lab_settings):
    from rag_lab.errors import ConfigError, DatasetError

    with pytest.raises(ValueError, match="The query must be text, got int"):
        api.search("texas_childcare", 4106, settings=lab_settings)
    with pytest.raises(ValueError, match="The query is empty"):
        api.ask("texas_childcare", "  ", settings=lab_settings)
    with pytest.raises(ValueError, match="top_n must be a whole number ≥ 1, got 0"):
        api.answerer("texas_childcare", top_n=0, settings=lab_settings)
    with pytest.raises(ConfigError, match="Unknown answering mode 'vector'") as refused:
        api.answerer("texas_childcare", mode="vector", settings=lab_settings)
    assert "agent" in str(refused.value)
    with pytest.raises(DatasetError, match="The dataset name is empty"):
        api.search("", "income", settings=lab_settings)


def test_answer_style_and_dev_split_are_keywords_as_they_are_flags(lab_settings, tmp_path):
    from rag_lab.errors import ConfigError

    with pytest.raises(ConfigError, match="Unknown answer style 'terse'"):
        api.answerer("texas_childcare", answer_style="terse", settings=lab_settings)
    from rag_lab.config import with_answer_style

    assert with_answer_style(lab_settings, "free").answer_style == "free"
    assert with_answer_style(lab_settings, None) is lab_settings
    split = tmp_path / "my_dev.txt"
    split.write_text("texas_childcare/bcy-26-psoc-chart-twc-qa#Q3\n", encoding="utf-8")
    estimate = api.evaluate("texas_childcare", "bm25", tmp_path / "run", split="dev", dev_split=split, dry_run=True,
                            settings=lab_settings)
    assert estimate.samples == 1  # the one question of the file given, not the folder's dev_split.txt
    for function in (api.ir, api.ablate):
        assert "dev_split" in inspect.signature(function).parameters


def test_a_mode_named_twice_is_run_once(lab_settings, tmp_path):
    estimate = api.evaluate("texas_childcare", "bm25,bm25", tmp_path / "run", limit=1, dry_run=True, settings=lab_settings)
    assert estimate.samples == 1
