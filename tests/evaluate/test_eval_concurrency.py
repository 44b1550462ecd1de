"""`eval --concurrency/--max-cost/--dry-run` and the provider-fault handling of a run, through the
real openai SDK, LlamaIndex and RAGAS over real HTTP: the generator is `openai_compatible` and the
judge `--judge openai_compatible:MODEL`, both pointed at a fake OpenAI-compatible server on
127.0.0.1 (tests/models/fake_openai_server.py). Every run is bounded in time (``_bounded``)."""

from __future__ import annotations

import json
import re

import pytest

from rag_lab.evaluate import load_run, run_evaluation
from rag_lab.schedule import RunStopped
from tests.evaluate.test_judged_metrics import judge_or_quote
from tests.models.fake_openai_server import FakeOpenAI, run_within

BOUND = 300.0  # seconds; generous: the test machine's 2 cores are shared
METRICS = ["faithfulness", "rouge_l"]
JUDGE = "openai_compatible:fake-judge"


@pytest.fixture
def server(fake_openai):
    return lambda **behaviour: fake_openai(reply=judge_or_quote, **behaviour)


def _remote(lab_settings, fake: FakeOpenAI, **update):
    return lab_settings.model_copy(update={"llm_provider": "openai_compatible", "llm_base_url": fake.url,
                                           "llm_model": "fake-gen", "judge_base_url": fake.url, **update})


def _bounded(fn, *args, **kwargs):
    return run_within(BOUND, fn, *args, **kwargs)


def _lines(out, mode) -> list[dict]:
    return [json.loads(line) for line in (out / mode / "samples.jsonl").read_text(encoding="utf-8").splitlines()]


def _table(run):
    """The per-mode table without what depends on timing or on the cache."""
    modes = run.modes.drop(columns=[c for c in run.modes.columns if c.startswith("latency") or c.endswith("_s") or c == "cached"])
    return run.summary.sort_values(["mode", "metric"]).reset_index(drop=True), modes.reset_index(drop=True)


def test_concurrency_keeps_n_in_flight_resumes_exactly_and_matches_a_sequential_run(server, lab_settings, texas_index,
                                                                                     tmp_path):
    fake = server(latency=0.4)  # long enough that 4 workers' requests overlap even on a busy machine
    settings = _remote(lab_settings, fake, llm_model="fake-gen-concurrency")
    kwargs = dict(limit=4, judge=JUDGE, rerank=False, progress=False, metrics=METRICS)
    out = tmp_path / "c4"
    _bounded(run_evaluation, "texas_childcare", settings, ["bm25", "dense"], out, concurrency=4, **kwargs)
    assert fake.max_in_flight >= 2  # several samples were answered and judged at once
    for mode in ("bm25", "dense"):
        records = _lines(out, mode)
        assert len(records) == 4 and len({r["id"] for r in records}) == 4
        assert all(r["error"] is None and r["scores"]["faithfulness"] is not None for r in records)

    # a SIGKILL while samples were in flight: 1 whole line and a cut-off one are on disk
    path = out / "bm25" / "samples.jsonl"
    text = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(text[0] + text[1][:40], encoding="utf-8")
    asked = len(fake.requests)
    _bounded(run_evaluation, "texas_childcare", settings, ["bm25", "dense"], out, concurrency=4, resume=True, **kwargs)
    records = _lines(out, "bm25")
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in _lines(out, "dense"))  # none lost
    assert len(records) == 4  # none twice: only the 3 missing ones were run again
    assert len(fake.requests) == asked  # …from the answer and judge caches

    sequential = tmp_path / "c1"
    _bounded(run_evaluation, "texas_childcare", settings, ["bm25", "dense"], sequential, concurrency=1, **kwargs)
    (summary_4, modes_4), (summary_1, modes_1) = _table(load_run(out)), _table(load_run(sequential))
    assert summary_4.equals(summary_1) and modes_4.equals(modes_1)


def test_429_with_retry_after_and_a_500_are_retried_by_the_sdk(server, lab_settings, texas_index, tmp_path):
    failed: list[int] = []

    def fault(seen):
        if len(failed) < 2 and seen.retry_count == 0:
            failed.append(1)
            return (429, {"Retry-After": "1"}) if len(failed) == 1 else (500, {})
        return None

    fake = server(fault=fault)
    settings = _remote(lab_settings, fake, llm_model="fake-gen-429")
    (_, seconds) = _bounded(run_evaluation, "texas_childcare", settings, ["bm25"], tmp_path / "r", limit=1,
                            judge=JUDGE, rerank=False, progress=False, metrics=METRICS, concurrency=2)
    record = _lines(tmp_path / "r", "bm25")[0]
    assert record["error"] is None and record["score_errors"] == {}
    assert [r.retry_count for r in fake.requests[:2]] == [0, 1]  # the answer call, retried once after the 429
    assert seconds >= 1.0  # Retry-After: 1 was honoured
    assert sum(1 for r in fake.requests if r.retry_count == 1) == 2  # and the 500 was retried once


def test_a_run_stops_after_consecutive_failures_with_one_clear_message(server, lab_settings, texas_index, tmp_path):
    fake = server(status=500)
    settings = _remote(lab_settings, fake, llm_model="fake-gen-500", max_retries=1, max_consecutive_failures=3)
    out = tmp_path / "r"
    with pytest.raises(RunStopped) as stopped:
        _bounded(run_evaluation, "texas_childcare", settings, ["bm25"], out, limit=12, rerank=False,
                 progress=False, metrics=METRICS, concurrency=2)
    message = str(stopped.value)
    assert re.search(r"stopped after [34] samples in a row", message)  # 3, or 4 when two finish together
    assert "HTTP 500" in message and "fake-gen-500" in message
    assert "--resume" in message
    records = _lines(out, "bm25")
    assert 3 <= len(records) <= 4  # the streak, plus at most the one other sample in flight
    assert all(r["error"].startswith("ProviderError") and "HTTP 500" in r["error"] for r in records)  # recorded
    assert len(fake.requests) == 2 * len(records)  # 1 + max_retries attempts each, nothing after the stop


def _openai_at(lab_settings, fake, monkeypatch):
    """The `openai` provider (a model with a list price) at the fake server, as OPENAI_BASE_URL does."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
    return lab_settings.model_copy(update={"llm_provider": "openai", "llm_model": "gpt-4o-mini",
                                           "openai_api_key": __import__("pydantic").SecretStr("sk-test")})


def test_max_cost_stops_before_the_estimate_would_pass_it(server, lab_settings, texas_index, tmp_path, monkeypatch):
    from rag_lab.evaluate.plan.estimates import SampleCosts

    fake = server()
    settings = _openai_at(lab_settings, fake, monkeypatch)
    per_sample = SampleCosts(settings, mode="bm25", rerank=False, params={}, judge_cfg=None, judge_metrics=[],
                             answer_cached=lambda q: False, answer_model=("openai", "gpt-4o-mini")).answer_cost
    assert per_sample > 0
    out = tmp_path / "r"
    with pytest.raises(RunStopped, match=r"--max-cost \$"):  # one sample fits, two in flight would not
        _bounded(run_evaluation, "texas_childcare", settings, ["bm25"], out, limit=4, rerank=False, progress=False,
                 metrics=METRICS, concurrency=4, max_cost=1.5 * per_sample)
    assert len(_lines(out, "bm25")) == 1 and len(fake.requests) == 1
    with pytest.raises(RunStopped):  # below one sample's estimate: no call at all
        _bounded(run_evaluation, "texas_childcare", settings, ["bm25"], tmp_path / "none", limit=4, rerank=False,
                 progress=False, metrics=METRICS, concurrency=4, max_cost=0.5 * per_sample)
    assert len(fake.requests) == 1


def test_dry_run_prints_calls_tokens_time_and_cost_and_calls_nothing(server, lab_settings, texas_index, tmp_path,
                                                                     monkeypatch, capsys):
    from rag_lab.cli.main import main

    fake = server()
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for name, value in {"RAG_LAB_DATA_DIR": str(lab_settings.data_dir), "RAG_LAB_DATASETS_DIR":
                        str(lab_settings.datasets_dir), "RAG_LAB_LLM_PROVIDER": "openai",
                        "RAG_LAB_LLM_MODEL": "gpt-4o-mini"}.items():
        monkeypatch.setenv(name, value)
    from rag_lab.config import get_settings

    get_settings.cache_clear()
    try:
            code = main(["eval", "texas_childcare", "--modes", "bm25,dense", "--limit", "5", "--no-rerank",
                     "--judge", "openai:gpt-4o-mini", "--dry-run", "--out", str(tmp_path / "dry")])
    finally:
        get_settings.cache_clear()
    printed = capsys.readouterr().out
    assert code == 0 and fake.requests == []
    assert "dry run: 10 sample(s)" in printed and "at concurrency 8" in printed
    assert "prompt +" in printed and "≈ $" in printed and "No call was made" in printed
    assert not (tmp_path / "dry").exists()  # nothing written either
