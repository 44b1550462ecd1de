"""One name and one meaning per lever: a config file's ``top_k`` is what the retriever returns and its
``top_n`` what the LLM reads, in ``search``, ``ask``, ``eval`` and ``ir`` and in the Python API alike;
``fusion_k`` is the one name of RRF k (an old name is refused with the new one); every API verb
refuses a keyword it does not know. On the real texas_childcare index, with a scripted generator."""

from __future__ import annotations

import inspect
import json
import re

import pytest

from rag_lab import api
from rag_lab.errors import RagLabWarning
from rag_lab.retrieve.tuned_config import TunedConfig, write_tuned_config
from tests.answer.conftest import ScriptedLLM
from tests.cli.test_cli import cli  # noqa: F401  (the in-process CLI fixture)
from tests.evaluate.conftest import quoting_answer

QUESTION = "What is the maximum bi-weekly income for a family of 5?"
# retrieve 6, give the LLM 3: the two numbers differ so a swap of their meanings shows
CONFIG = TunedConfig("hybrid", 5, 10, 0.7, 1.3, 0, top_k=6, top_n=3, provenance={"dataset": "texas_childcare"})


@pytest.fixture
def config_file(tmp_path):
    return write_tuned_config(tmp_path / "tuned.toml", CONFIG)


@pytest.fixture
def generator(monkeypatch):
    llm = ScriptedLLM(script=quoting_answer)
    monkeypatch.setattr("rag_lab.models.llm.get_llm", lambda settings, **kw: llm)
    return llm


def _same_chunk(record: dict) -> tuple:
    return record["rank"], record["doc_id"], record["page"], round(record["score"], 9)


def test_one_config_file_gives_search_and_ask_the_same_chunks(cli, config_file, generator, lab_settings):  # noqa: F811
    code, out, err = cli("search", "texas_childcare", QUESTION, "--config", str(config_file), "--json")
    assert code == 0
    searched = json.loads(out)
    assert len(searched) == CONFIG.top_k  # top_k: what the retriever returns
    assert f"config {config_file}: hybrid fusion_k 5 prefetch 10 weights 0.7:1.3 max_per_doc 0 (no cap) top_k 6 top_n 3" in err

    code, out, err = cli("ask", "texas_childcare", QUESTION, "--config", str(config_file), "--json")
    assert code == 0 and f"config {config_file}: hybrid fusion_k 5" in err
    answer = json.loads(out)
    assert answer["mode"] == "hybrid"
    assert answer["rerank"]["candidates"] == CONFIG.top_k  # ask retrieved what search showed …
    assert [_same_chunk(c) for c in answer["chunks"]] == [_same_chunk(r) for r in searched[:CONFIG.top_n]]
    prompt = generator.answer_prompts[-1]  # … and the LLM read the first top_n of them
    assert len(re.findall(r"^\[Doc \d+:", prompt, re.M)) == CONFIG.top_n

    # the Python API with config= (a path, or the TunedConfig itself) does the same
    from rag_lab.retrieve.records import results_json

    for config in (str(config_file), CONFIG):
        hits = api.search("texas_childcare", QUESTION, config=config, settings=lab_settings)
        assert [_same_chunk(r) for r in results_json(hits)] == [_same_chunk(r) for r in searched]
        asked = api.ask("texas_childcare", QUESTION, config=config, settings=lab_settings, llm=generator).to_dict()
        assert asked["rerank"]["candidates"] == CONFIG.top_k
        assert [_same_chunk(c) for c in asked["chunks"]] == [_same_chunk(r) for r in searched[:CONFIG.top_n]]
    # a keyword given wins over the file, as a flag does
    wider = api.search("texas_childcare", QUESTION, config=CONFIG, top_k=9, settings=lab_settings)
    assert len(wider) == 9


def test_ir_and_eval_with_a_config_run_only_its_mode(cli, config_file, generator, tmp_path):  # noqa: F811
    out = tmp_path / "ir.json"
    code, _, _ = cli("ir", "texas_childcare", "--config", str(config_file), "--limit", "3", "--json", str(out))
    assert code == 0
    report = json.loads(out.read_text())
    assert list(report["results"]) == ["hybrid"]
    assert (report["params"]["fusion_k"], report["params"]["prefetch"], report["params"]["dense_weight"]) == (5, 10, 0.7)
    code, _, _ = cli("ir", "texas_childcare", "--config", str(config_file), "--modes", "bm25,hybrid", "--limit", "3",
                     "--json", str(out))
    assert code == 0 and list(json.loads(out.read_text())["results"]) == ["bm25", "hybrid"]  # --modes wins

    run = tmp_path / "eval"
    code, _, _ = cli("eval", "texas_childcare", "--config", str(config_file), "--limit", "1", "--out", str(run))
    assert code == 0
    manifest = json.loads((run / "manifest.json").read_text())["config"]
    assert manifest["modes"] == ["hybrid"]
    assert manifest["params"] == {"fusion_k": 5, "prefetch": 10, "dense_weight": 0.7, "sparse_weight": 1.3,
                                  "top_k": 6, "top_n": 3}


def test_a_config_tuned_on_another_dataset_is_named_and_warned_about(cli, tmp_path, lab_settings):  # noqa: F811
    other = write_tuned_config(tmp_path / "full.toml", TunedConfig(
        "fusion", 5, 25, 1.0, 1.0, 1, 5, 5, provenance={"dataset": "texas_childcare_full"}))
    code, _, err = cli("search", "texas_childcare", QUESTION, "--config", str(other), "--json")
    assert code == 0
    assert f"config {other}: fusion fusion_k 5 prefetch 25" in err and "(tuned on texas_childcare_full)" in err
    assert "warning:" in err and "tuned on texas_childcare_full, not texas_childcare" in err
    assert err.index(f"config {other}:") < err.index("warning:")  # what applies first, then the warning
    with pytest.warns(RagLabWarning, match="tuned on texas_childcare_full, not texas_childcare"):
        api.search("texas_childcare", QUESTION, config=other, settings=lab_settings)
    same = write_tuned_config(tmp_path / "same.toml", CONFIG)
    code, _, err = cli("search", "texas_childcare", QUESTION, "--config", str(same), "--json")
    assert code == 0 and "warning" not in err  # tuned on this dataset: nothing to warn about


def test_an_old_key_is_refused_with_its_new_name(lab_cli, tmp_path):
    old = tmp_path / "old.toml"
    old.write_text('[retrieval]\nmode = "hybrid"\nrrf_k = 5\nprefetch = 25\n')
    code, _, err = lab_cli("search", "texas_childcare", QUESTION, "--config", str(old))
    assert code == 2 and "'rrf_k' is now called 'fusion_k'" in err and len(err.strip().splitlines()) == 2  # + hint
    grid = tmp_path / "grid.yaml"
    grid.write_text("modes: [fusion]\nrrf_k: [1, 60]\n")
    code, _, err = lab_cli("ablate", "texas_childcare", "--grid", str(grid), "--out", str(tmp_path / "ab"))
    assert code == 2 and "'rrf_k' is now called 'fusion_k'" in err
    assert not (tmp_path / "ab").exists()
    with pytest.raises(TypeError, match="'rrf_k' is now called 'fusion_k'"):
        api.search("texas_childcare", QUESTION, mode="fusion", rrf_k=1)


def test_fusion_k_changes_the_fused_ranking_through_the_api(cli, lab_settings):  # noqa: F811
    from rag_lab.retrieve.records import results_json

    query = "parent share of cost"

    def ranking(**fusion_k):
        hits = api.search("texas_childcare", query, mode="fusion", top_k=10, explain=True, settings=lab_settings,
                          **fusion_k)
        records = results_json(hits, include_explanation=True)
        return [(r["doc_id"], r["page"], r["text"][:40]) for r in records], records

    sharp, records = ranking(fusion_k=1)
    default, _ = ranking()
    assert sharp != default  # another k, another fused order (not the default's, silently)
    # the scores are RRF's at k = 1 (ranks from 1): the keyword reached the retriever
    for record in records:
        why = record["explanation"]
        expected = sum(1.0 / (1 + rank) for rank in (why["dense_rank"], why["sparse_rank"]) if rank)
        assert why["k"] == 1 and record["score"] == pytest.approx(expected)
    code, out, _ = cli("search", "texas_childcare", query, "--mode", "fusion", "--fusion-k", "1", "--top-k", "10",
                       "--json")
    assert code == 0 and [(r["doc_id"], r["page"], r["text"][:40]) for r in json.loads(out)] == sharp


VERBS = {  # each verb with its required arguments
    "index": ("texas_childcare",), "search": ("texas_childcare", "q"), "ask": ("texas_childcare", "q"),
    "answerer": ("texas_childcare",), "evaluate": ("texas_childcare",), "ir": ("texas_childcare",),
    "ablate": ("texas_childcare",), "report": ("runs/x",),
}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_api_verb_refuses_an_unknown_keyword_and_lists_the_accepted_ones(verb, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    function = getattr(api, verb)
    accepted = [n for n, p in inspect.signature(function).parameters.items() if p.kind is not p.VAR_KEYWORD]
    with pytest.raises(TypeError) as raised:
        function(*VERBS[verb], bogus_option=3)
    message = str(raised.value)
    assert f"api.{verb}()" in message and "'bogus_option'" in message
    assert message.endswith("it accepts: " + ", ".join(accepted))
    assert not list(tmp_path.iterdir())  # refused before anything was written
    if verb not in ("index", "report"):  # the verbs that retrieve take a tuned configuration, as --config
        assert {"config", "fusion_k", "prefetch", "max_per_doc"} <= set(accepted)


def test_ablate_with_a_config_varies_one_lever_around_it(tmp_path):
    from rag_lab.cli.ablate import grid_from_args
    from rag_lab.cli.main import build_parser
    from rag_lab.errors import ConfigError

    path = write_tuned_config(tmp_path / "c.toml", CONFIG)
    spec = grid_from_args(build_parser().parse_args(["ablate", "texas_childcare", "--config", str(path),
                                                     "--fusion-k", "1,5,60"]))
    assert (spec.modes, spec.fusion_k, spec.prefetch, spec.top_k, spec.weights, spec.max_per_doc) == \
        (("hybrid",), (1, 5, 60), (10,), (6,), ((0.7, 1.3),), (0,))
    rewrites = write_tuned_config(tmp_path / "rw.toml", TunedConfig("hybrid", 5, 10, 1.0, 1.0, 1, 6, num_queries=3))
    with pytest.raises(ConfigError, match="num_queries = 3"):
        grid_from_args(build_parser().parse_args(["ablate", "texas_childcare", "--config", str(rewrites)]))


def test_a_resumed_run_reads_an_old_manifests_rrf_k_as_fusion_k():
    from rag_lab.evaluate.run.runner import configuration_differences

    old = {"config": {"params": {"rrf_k": 5, "top_n": 5}}}
    assert configuration_differences(old, {"config": {"params": {"fusion_k": 5, "top_n": 5}}}) == []
    assert configuration_differences(old, {"config": {"params": {"fusion_k": 10, "top_n": 5}}}) == ["fusion k: 5 → 10"]


def test_a_lever_given_at_its_default_is_the_same_configuration_as_the_run_without_it():
    from rag_lab.answer.engine import DEFAULT_TOP_K
    from rag_lab.answer.rerank import DEFAULT_TOP_N
    from rag_lab.evaluate.run.runner import configuration_differences

    without = {"config": {"params": {}}}
    explicit = {"config": {"params": {"top_k": DEFAULT_TOP_K, "top_n": DEFAULT_TOP_N, "fusion_k": 60, "prefetch": 100}}}
    assert configuration_differences(without, explicit) == []
    assert configuration_differences(explicit, without) == []
    assert configuration_differences(without, {"config": {"params": {"top_n": 3}}}) == [
        f"top-n: default ({DEFAULT_TOP_N}) → 3"]


def test_ask_and_eval_take_the_contextual_variant(cli, generator, tmp_path, lab_settings):  # noqa: F811
    from rag_lab.index import CorpusIndex

    run = tmp_path / "ctx"
    code, _, err = cli("eval", "texas_childcare", "--modes", "bm25", "--limit", "1", "--contextual", "annotations",
                       "--out", str(run))
    assert code == 0, err
    config = json.loads((run / "manifest.json").read_text())["config"]
    contextual = CorpusIndex.open("texas_childcare", lab_settings, "annotations").manifest.fingerprint
    assert config["params"] == {"contextual": "annotations"}
    assert config["index_fingerprint"] == contextual != CorpusIndex.open("texas_childcare", lab_settings).manifest.fingerprint

    searches = {}
    for variant in ("none", "annotations"):
        code, out, _ = cli("search", "texas_childcare", QUESTION, "--mode", "bm25", "--contextual", variant,
                           "--top-k", "4", "--json")
        assert code == 0
        searches[variant] = [_same_chunk(r) for r in json.loads(out)]
    assert searches["none"] != searches["annotations"]  # the context changes BM25's scores
    code, out, _ = cli("ask", "texas_childcare", QUESTION, "--mode", "bm25", "--contextual", "annotations",
                       "--top-k", "4", "--top-n", "4", "--json")
    assert code == 0 and [_same_chunk(c) for c in json.loads(out)["chunks"]] == searches["annotations"]
