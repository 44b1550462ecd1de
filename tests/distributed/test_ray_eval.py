"""`rag-lab eval --ray`: samples answered and judged on Ray actors (a local Ray instance), through the
real openai SDK, LlamaIndex and RAGAS against a fake OpenAI-compatible server on 127.0.0.1, give the
same records and the same per-mode table as a run in this process; the driver still writes every
line, so a resumed Ray run loses and repeats nothing."""

from __future__ import annotations

import json

import pytest

from rag_lab.distributed.cluster import RayCluster
from rag_lab.distributed.samples import ray_sample_executor
from rag_lab.evaluate import load_run, run_evaluation
from rag_lab.evaluate.run.sample_worker import SampleWorker
from tests.evaluate.test_judged_metrics import judge_or_quote
from tests.models.fake_openai_server import run_within

BOUND = 600.0  # seconds: a hang guard, not a speed claim (the 2 cores may be shared with other jobs)
METRICS = ["faithfulness", "rouge_l"]
JUDGE = "openai_compatible:fake-judge"
VOLATILE = ("latency", "cached")  # timings, and whether the answer came from the cache


def _settings(lab_settings, fake, data_dir, model):
    """The session's texas_childcare index, with a cache of this test's own (so every run answers afresh)."""
    (data_dir / "indexes").parent.mkdir(parents=True, exist_ok=True)
    (data_dir / "indexes").symlink_to(lab_settings.index_dir, target_is_directory=True)
    return lab_settings.model_copy(update={"data_dir": data_dir, "llm_provider": "openai_compatible",
                                           "llm_base_url": fake.url, "llm_model": model, "judge_base_url": fake.url})


def _records(out, mode) -> dict[str, dict]:
    lines = (out / mode / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    return {r["id"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in records}


def _table(run):
    modes = run.modes.drop(columns=[c for c in run.modes.columns
                                    if c.startswith("latency") or c.endswith("_s") or c == "cached"])
    return run.summary.sort_values(["mode", "metric"]).reset_index(drop=True), modes.reset_index(drop=True)


def _difference(requests, split: int, tmp_path) -> str:
    """What a failed comparison needs to be understood (CI shows only the tail of pytest's set diff):
    each run's extra requests, its retried ones and its samples' errors."""
    runs = {"local": (requests[:split], tmp_path / "local"), "ray": (requests[split:], tmp_path / "ray")}
    keys = {name: {(r.path, r.model, r.prompt) for r in seen} for name, (seen, _) in runs.items()}
    lines = []
    for name, (seen, out) in runs.items():
        other = keys["ray" if name == "local" else "local"]
        extra = [r for r in seen if (r.path, r.model, r.prompt) not in other]
        lines.append(f"{name}: {len(seen)} requests, {sum(r.retry_count > 0 for r in seen)} retries, "
                     f"{len(extra)} not asked by the other run")
        lines += [f"  {r.model} retry={r.retry_count}: {r.prompt[:70]!r} … {r.prompt[-300:]!r}" for r in extra]
        for mode in ("bm25", "dense"):
            records = _records(out, mode) if (out / mode / "samples.jsonl").exists() else {}
            lines += [f"  {mode} {i}: error={r['error']!r} score_errors={r['score_errors']!r} "
                      f"contexts={[c.get('doc_id') for c in r['contexts']]}" for i, r in records.items()]
    return "\n".join(lines)


def test_eval_on_ray_matches_a_local_run_and_resumes_exactly(local_ray, fake_openai, lab_settings, texas_index,
                                                             tmp_path, monkeypatch):
    fake = fake_openai(reply=judge_or_quote)
    kwargs = dict(limit=4, judge=JUDGE, rerank=False, progress=False, metrics=METRICS)
    local = _settings(lab_settings, fake, tmp_path / "local-data", "fake-gen-ray")
    on_ray = _settings(lab_settings, fake, tmp_path / "ray-data", "fake-gen-ray")
    run_within(BOUND, run_evaluation, "texas_childcare", local, ["bm25", "dense"], tmp_path / "local", **kwargs)
    asked_locally = len(fake.requests)

    # Every sample runs on an actor: the driver's own worker would fail the sample if it were called.
    def not_here(self, mode, item):
        raise AssertionError("a sample was evaluated in the driver")
    monkeypatch.setattr(SampleWorker, "__call__", not_here)
    out = tmp_path / "ray"
    run_within(BOUND, run_evaluation, "texas_childcare", on_ray, ["bm25", "dense"], out,
               executor=ray_sample_executor(RayCluster(workers=2)), **kwargs)
    # answered and judged afresh, on the actors: every request the local run made, made again. (Not
    # "as many": two samples with the same prompt — bm25 and dense retrieving the same chunks — race
    # to the answer/judge cache, so such a prompt is asked once or twice, in either run.)
    asked = [(r.path, r.model, r.prompt) for r in fake.requests]
    assert set(asked[asked_locally:]) == set(asked[:asked_locally]), _difference(fake.requests, asked_locally,
                                                                                  tmp_path)
    for mode in ("bm25", "dense"):
        records = _records(out, mode)
        assert len(records) == 4 and all(r["error"] is None for r in records.values())
        assert all(r["scores"]["faithfulness"] is not None for r in records.values())
        assert records == _records(tmp_path / "local", mode)  # answers, contexts, citations, scores
    ray_table, local_table = _table(load_run(out)), _table(load_run(tmp_path / "local"))
    assert ray_table[0].equals(local_table[0]) and ray_table[1].equals(local_table[1])

    # a SIGKILL mid-run: one whole line and a cut-off one are on disk; a Ray resume runs the 3 others once
    path = out / "bm25" / "samples.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[0] + lines[1][:40], encoding="utf-8")
    # (one actor is enough to resume on: each actor loads its own generator, judge and index)
    run_within(BOUND, run_evaluation, "texas_childcare", on_ray, ["bm25", "dense"], out, resume=True,
               executor=ray_sample_executor(RayCluster(workers=1)), **kwargs)
    assert _records(out, "bm25") == _records(tmp_path / "local", "bm25")
    assert len(path.read_text(encoding="utf-8").splitlines()) == 4  # none lost, none twice


def test_eval_ray_refuses_llm_objects_it_cannot_ship(lab_settings, tmp_path):
    from rag_lab.errors import ConfigError

    with pytest.raises(ConfigError, match="LLM objects passed in cannot be used there"):
        run_evaluation("texas_childcare", lab_settings, ["bm25"], tmp_path / "r", limit=1,
                       executor=ray_sample_executor(RayCluster()),
                       llm=object(), progress=False)
