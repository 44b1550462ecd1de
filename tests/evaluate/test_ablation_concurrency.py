"""`ablate --concurrency N`: the answers of --answer-configs are generated N at a time through the real
openai SDK and LlamaIndex against a fake OpenAI-compatible server on 127.0.0.1; `answers.jsonl` is
written by one thread (a line per answer), resumes exactly after a cut, and equals a sequential run."""

from __future__ import annotations

import json

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.errors import ConfigError
from rag_lab.evaluate.ablation import runner as ablation
from rag_lab.evaluate.ablation.answers import parse_answer_configs
from rag_lab.evaluate.ablation.grid import GridSpec
from tests.evaluate.test_judged_metrics import judge_or_quote
from tests.models.fake_openai_server import run_within

SPEC = GridSpec(modes=("fusion", "hybrid"), fusion_k=(60,), prefetch=(20,), top_k=(3, 5), default_prefetch=20)
BOUND = 300.0


@pytest.fixture(scope="module")
def texas(texas_index, lab_settings):
    return resolve_dataset("texas_childcare", lab_settings.datasets_dir)


def _ablate(texas, settings, out, concurrency):
    return run_within(BOUND, ablation.run_ablation, texas, settings, SPEC, out, limit=4, progress=False,
                      answer_configs=parse_answer_configs("3,5", SPEC), answer_limit=3, concurrency=concurrency)[0]


def _answers(result):
    return result.answers.drop(columns=["latency_s"]).sort_values(["config", "qid"]).reset_index(drop=True)


def test_answers_in_flight_resume_exactly_and_equal_a_sequential_run(texas, lab_settings, fake_openai, tmp_path):
    fake = fake_openai(reply=judge_or_quote, latency=0.3)
    settings = lab_settings.model_copy(update={"llm_provider": "openai_compatible", "llm_base_url": fake.url,
                                               "llm_model": "fake-ablation-gen"})
    out = tmp_path / "c4"
    parallel = _ablate(texas, settings, out, 4)
    assert fake.max_in_flight >= 2  # several answers were being generated at once
    lines = (out / "answers.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    distinct = parallel.manifest["answers"]["distinct_contexts"]
    assert len(lines) == distinct == len(fake.requests) and len(parallel.answers) == 4 * 3

    # killed with answers in flight: one whole line and a cut-off one are on disk
    (out / "answers.jsonl").write_text(lines[0] + lines[1][:30], encoding="utf-8")
    asked = len(fake.requests)
    resumed = _ablate(texas, settings, out, 4)
    records = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(fake.requests) - asked == distinct - 1  # exactly the missing answers, each once
    assert sorted(r["context"] for r in records) == sorted(json.loads(line)["context"] for line in lines)
    assert _answers(resumed).equals(_answers(parallel))

    sequential = _ablate(texas, settings, tmp_path / "c1", 1)
    assert _answers(sequential).equals(_answers(parallel))


def test_the_local_model_refuses_more_than_one_answer_at_a_time(texas, lab_settings, tmp_path):
    local = lab_settings.model_copy(update={"llm_provider": "local"})
    with pytest.raises(ConfigError, match=r"--concurrency 2: the local model \(generator\) answers one prompt"):
        _ablate(texas, local, tmp_path / "local", 2)
    assert not (tmp_path / "local").exists()  # refused before any work


def test_ablate_cli_takes_concurrency(capsys):
    from rag_lab.cli.main import main

    with pytest.raises(SystemExit) as exit_info:  # refused by the argument parser, before any work
        main(["ablate", "texas_childcare", "--concurrency", "0"])
    assert exit_info.value.code == 2
    assert "argument --concurrency: must be ≥ 1, got 0" in capsys.readouterr().err
