"""`RAG_LAB_LLM_RPM` under `eval --ray`: one requests-per-minute budget per endpoint for every Ray actor
of a run (a bucket actor hands out the tokens), measured where it counts: the arrival times of the
requests at a fake OpenAI-compatible server on 127.0.0.1, through the real openai SDK, LlamaIndex and
RAGAS on a local Ray instance."""

from __future__ import annotations

from rag_lab.distributed.cluster import RayCluster
from rag_lab.distributed.samples import ray_sample_executor
from rag_lab.evaluate import load_run, run_evaluation
from tests.builders import write_folder_dataset
from tests.evaluate.test_judged_metrics import judge_or_quote
from tests.models.fake_openai_server import run_within

BOUND = 600.0  # seconds: a hang guard, not a speed claim
ANIMALS = ["cat", "dog", "budgie", "rabbit", "hamster", "goldfish"]
RPM = 60  # one request a second, one at once


def _zoo(root, lab_settings) -> str:
    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import build_index

    docs = {f"{a}.txt": f"A {a} is a pet.\nFeeding a {a} costs ${10 * (i + 1)} a month.\n" for i, a in enumerate(ANIMALS)}
    qa = [{"id": a, "question": f"How much does feeding a {a} cost a month?",
           "reference_answer": f"Feeding a {a} costs ${10 * (i + 1)} a month.", "source_file": f"{a}.txt"}
          for i, a in enumerate(ANIMALS)]
    write_folder_dataset(root, docs, qa)
    build_index(resolve_dataset(root), lab_settings, progress=False)
    return str(root)


def most_in_window(times: list[float], seconds: float) -> int:
    """The most requests that arrived within any ``seconds``-long window."""
    times = sorted(times)
    return max((sum(1 for t in times[i:] if t - start < seconds) for i, start in enumerate(times)), default=0)


def test_two_ray_workers_share_one_requests_per_minute_budget(local_ray, fake_openai, lab_settings, tmp_path):
    zoo = _zoo(tmp_path / "zoo", lab_settings)
    fake = fake_openai(reply=judge_or_quote)
    settings = lab_settings.model_copy(update={
        "llm_provider": "openai_compatible", "llm_base_url": fake.url, "llm_model": "gen-ray-rpm",
        "judge_base_url": fake.url, "llm_rpm": RPM, "judge_deadline": 5.0, "max_retries": 0})
    out = tmp_path / "run"
    run_within(BOUND, run_evaluation, zoo, settings, ["bm25"], out, judge="openai_compatible:judge-ray-rpm",
               rerank=False, progress=False, metrics=["faithfulness", "rouge_l"], concurrency=4,
               executor=ray_sample_executor(RayCluster(workers=2)))
    records = load_run(out).records["bm25"]
    assert len(records) == len(ANIMALS)
    failed = [(r["id"], r["error"], r.get("score_errors"), r["scores"].get("faithfulness")) for r in records
              if r["error"] is not None or r["scores"]["faithfulness"] is None]
    assert not failed, failed  # slower, not NaN
    times = [r.at for r in fake.requests]
    assert len(times) >= 3 * len(ANIMALS)  # an answer and two judge calls a sample
    # one bucket for both workers: ≤ 1 at once + 1 a second (+1 for a request sent just as its wait ended).
    # A bucket per worker would let ≈ 2 a second through (≈ 12 in 6 s).
    for window in (3.0, 6.0, 60.0):
        assert most_in_window(times, window) <= 1 + window * RPM / 60 + 1, (window, sorted(times))
    assert max(times) - min(times) >= (len(times) - 2) * 60 / RPM - 1  # the budget set the pace
