"""The config file round trip: written by `rag-lab tune`, read by `search`, `ir`, `ask` and `eval`
(`--config FILE`; options given on the command line win)."""

from __future__ import annotations

import json
import re

import pytest

from rag_lab.errors import ConfigError
from rag_lab.retrieve.tuned_config import TunedConfig, read_tuned_config, write_tuned_config
from tests.answer.conftest import ScriptedLLM
from tests.cli.test_cli import cli  # noqa: F401  (the in-process CLI fixture)
from tests.evaluate.conftest import quoting_answer


@pytest.fixture(scope="module")
def tuned(texas_index, lab_settings, tmp_path_factory):
    """`rag-lab tune texas_childcare` with a small grid, run once for the module."""
    import os

    from rag_lab.cli.main import main
    from rag_lab.config import get_settings

    out = tmp_path_factory.mktemp("tune") / "run"
    saved = {k: os.environ.get(k) for k in ("RAG_LAB_DATA_DIR", "RAG_LAB_DATASETS_DIR")}
    os.environ.update(RAG_LAB_DATA_DIR=str(lab_settings.data_dir), RAG_LAB_DATASETS_DIR=str(lab_settings.datasets_dir))
    get_settings.cache_clear()
    try:
        code = main(["tune", "texas_childcare", "--fusion-k", "5,60", "--prefetch", "25,100", "--top-k", "3,5,7",
                     "--weights", "1:1,1.3:0.7", "--max-per-doc", "0,1", "--out", str(out)])
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        get_settings.cache_clear()
    assert code == 0
    return out / "recommended.toml"


@pytest.fixture
def scripted_generator(monkeypatch):
    llm = ScriptedLLM(script=quoting_answer)
    monkeypatch.setattr("rag_lab.models.llm.get_llm", lambda settings, **kw: llm)
    return llm


def test_the_file_round_trips(tmp_path):
    config = TunedConfig("fusion", 10, 50, 1.3, 0.7, 1, 5, provenance={"dataset": "x", "rest_mean": 0.9,
                                                                          "nested": {"a": 1}})
    path = write_tuned_config(tmp_path / "c.toml", config, header="a header\nof two lines")
    back = read_tuned_config(path)
    assert back == config and back.provenance["rest_mean"] == 0.9
    assert json.loads(back.provenance["nested"]) == {"a": 1}
    assert back.answer_params() == {"fusion_k": 10, "prefetch": 50, "dense_weight": 1.3, "sparse_weight": 0.7,
                                    "max_per_doc": 1, "top_k": 5}  # no top_n in the file: the command's default
    (tmp_path / "typo.toml").write_text(path.read_text().replace("prefetch", "prefech"))
    with pytest.raises(ConfigError, match="unknown key"):
        read_tuned_config(tmp_path / "typo.toml")


def test_tune_writes_a_file_the_searches_follow(cli, tuned):  # noqa: F811
    config = read_tuned_config(tuned)
    assert config.provenance["dataset"] == "texas_childcare"
    question = "What is the maximum reimbursement rate for infant care?"
    code, from_file, _ = cli("search", "texas_childcare", question, "--config", str(tuned), "--json")
    assert code == 0
    explicit = ["--mode", config.mode, "--fusion-k", str(config.fusion_k), "--prefetch", str(config.prefetch),
                "--dense-weight", str(config.dense_weight), "--sparse-weight", str(config.sparse_weight),
                "--max-per-doc", str(config.max_per_doc), "--top-k", str(config.top_k), "--json"]
    code, by_flags, _ = cli("search", "texas_childcare", question, *explicit)
    assert code == 0 and json.loads(from_file) == json.loads(by_flags)
    assert len(json.loads(from_file)) == config.top_k
    code, wider, _ = cli("search", "texas_childcare", question, "--config", str(tuned), "--top-k", "9", "--json")
    assert code == 0 and len(json.loads(wider)) == 9  # the command line wins


def test_ir_takes_the_config(cli, tuned, tmp_path):  # noqa: F811
    config = read_tuned_config(tuned)
    out = tmp_path / "ir.json"
    code, stdout, _ = cli("ir", "texas_childcare", "--config", str(tuned), "--modes", config.mode, "--limit", "6",
                          "--json", str(out))
    assert code == 0
    params = json.loads(out.read_text())["params"]
    assert (params["fusion_k"], params["prefetch"], params["dense_weight"]) == \
        (config.fusion_k, config.prefetch, config.dense_weight)
    assert params["max_per_doc"] == (config.max_per_doc or 0)
    assert "chunk_hit@5" in stdout


def test_ask_and_eval_take_the_config(cli, tuned, scripted_generator, tmp_path):  # noqa: F811
    config = read_tuned_config(tuned)
    code, out, _ = cli("ask", "texas_childcare", "What is the infant care rate?", "--config", str(tuned), "--json")
    assert code == 0
    answer = json.loads(out)
    assert answer["mode"] == config.mode
    prompt = scripted_generator.prompts[-1]
    assert len(re.findall(r"^\[Doc \d+:", prompt, re.M)) == config.top_n  # top_n chunks reach the generator
    run = tmp_path / "eval"
    code, _, _ = cli("eval", "texas_childcare", "--modes", config.mode, "--limit", "1", "--config", str(tuned),
                     "--out", str(run))
    assert code == 0
    params = json.loads((run / "manifest.json").read_text())["config"]["params"]
    assert params["fusion_k"] == config.fusion_k and (params["top_k"], params["top_n"]) == (config.top_k, config.top_n)
    assert params["prefetch"] == config.prefetch


def test_the_demo_answers_the_recommended_configuration_beside_the_defaults(tmp_path):
    from rag_lab.cli.demo import _recommended

    assert _recommended(str(tmp_path / "missing.toml")) is None  # no tuned file: the demo shows the defaults only
    path = write_tuned_config(tmp_path / "r.toml", TunedConfig("fusion", 10, 50, 1.0, 1.0, 1, 5))
    label, mode, params = _recommended(str(path))
    assert label.startswith("recommended: fusion fusion_k 10 prefetch 50") and "max_per_doc 1 top_k 5" in label
    assert mode == "fusion" and params["top_k"] == 5 and params["max_per_doc"] == 1 and params["fusion_k"] == 10
