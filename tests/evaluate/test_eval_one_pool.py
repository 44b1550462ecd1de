"""`eval --concurrency N` keeps N samples in flight across modes: the next mode's samples start
while the last ones of a mode are still being answered and judged (a pool per mode left its workers
idle at every mode boundary: 2 samples per mode could never fill 4 workers). Real SDK, LlamaIndex and
RAGAS against the fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json

from rag_lab.evaluate import run_evaluation
from tests.evaluate.test_judged_metrics import judge_or_quote
from tests.models.fake_openai_server import run_within


def test_samples_of_two_modes_are_in_flight_together(fake_openai, lab_settings, texas_index, tmp_path):
    fake = fake_openai(reply=judge_or_quote, latency=1.0)  # a sample: 3 requests of 1 s, long enough to overlap
    settings = lab_settings.model_copy(update={"llm_provider": "openai_compatible", "llm_base_url": fake.url,
                                               "llm_model": "fake-gen-one-pool", "judge_base_url": fake.url})
    kwargs = dict(judge="openai_compatible:fake-judge-one-pool", rerank=False, progress=False,
                  metrics=["faithfulness"])
    warm = settings.model_copy(update={"llm_model": "fake-gen-warm"})  # its own answers: nothing cached below
    run_within(300, run_evaluation, "texas_childcare", warm, ["dense"], tmp_path / "warm", limit=1, concurrency=1,
               rerank=False, progress=False, metrics=["rouge_l"])  # MiniLM loaded: the dense answerer builds quickly
    fake.max_in_flight = 0
    run_within(300, run_evaluation, "texas_childcare", settings, ["bm25", "dense"], tmp_path / "r", limit=2,
               concurrency=4, **kwargs)
    assert fake.max_in_flight >= 3  # more than one mode's 2 samples at once
    for mode in ("bm25", "dense"):
        lines = (tmp_path / "r" / mode / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines]
        assert len(records) == 2 and {r["mode"] for r in records} == {mode} and all(r["error"] is None for r in records)
