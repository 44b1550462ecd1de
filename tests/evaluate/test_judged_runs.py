"""Judged runs that finish what they start, through the real openai SDK, LlamaIndex and RAGAS
over real HTTP to a fake OpenAI-compatible server on 127.0.0.1 (generator ``openai_compatible``, judge
``--judge openai_compatible:MODEL``), on a small folder dataset with a real index:

- ``--resume`` runs again the samples whose judged metric failed for a reason that may pass (HTTP 500),
  keeping what succeeded; a refusal (HTTP 401) is kept unless ``--retry-failed``;
- waiting for ``RAG_LAB_LLM_RPM`` is not judging time: a rate-limited run is slower, never NaN;
- ``--metrics`` chooses the metrics, and the table, manifest and resume honour it.
"""

from __future__ import annotations

import itertools
import json

import pytest

from rag_lab.evaluate import load_run, run_evaluation
from rag_lab.schedule import RunStopped
from rag_lab.evaluate.store.run_folder import read_samples
from tests.builders import write_folder_dataset
from tests.evaluate.test_judged_metrics import judge_or_quote
from tests.models.fake_openai_server import run_within

BOUND = 300.0  # seconds: a hang guard (the 2 cores are shared), not a speed claim
METRICS = ["faithfulness", "llm_context_recall", "rouge_l"]
ANIMALS = ["cat", "dog", "budgie", "rabbit", "hamster", "goldfish"]
RECALL_PROMPT = "Given a context, and an answer, analyze each sentence"  # llm_context_recall's one call
FAITHFULNESS_PROMPT = "Given a question and an answer, analyze the complexity"  # faithfulness's first call
_names = itertools.count()


@pytest.fixture(scope="module")
def zoo(tmp_path_factory, lab_settings):
    """Six documents with one dollar amount each, six questions; indexed (MiniLM, Qdrant, bm25s)."""
    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import build_index

    docs = {f"{a}.txt": f"A {a} is a pet.\nFeeding a {a} costs ${10 * (i + 1)} a month.\n" for i, a in enumerate(ANIMALS)}
    qa = [{"id": a, "question": f"How much does feeding a {a} cost a month?",
           "reference_answer": f"Feeding a {a} costs ${10 * (i + 1)} a month.", "source_file": f"{a}.txt"}
          for i, a in enumerate(ANIMALS)]
    root = write_folder_dataset(tmp_path_factory.mktemp("zoo") / "zoo", docs, qa)
    build_index(resolve_dataset(root), lab_settings, progress=False)
    return str(root)


def _remote(lab_settings, fake, **update):
    """The generator and judge at ``fake``, with model names of their own: nothing comes from the cache."""
    n = next(_names)
    return lab_settings.model_copy(update={"llm_provider": "openai_compatible", "llm_base_url": fake.url,
                                           "llm_model": f"gen-{n}", "judge_base_url": fake.url, "max_retries": 0,
                                           **update}), f"openai_compatible:judge-{n}"


def _failing(status: int, when: dict, prompt: str = RECALL_PROMPT):
    """A fault: HTTP ``status`` for the judge prompts starting with ``prompt`` while ``when["on"]``."""
    return lambda seen: (status, {}) if when["on"] and seen.prompt.startswith(prompt) else None


def _judged(out, mode="bm25") -> dict[str, dict]:
    return {r["id"]: r for r in load_run(out).records[mode]}


def test_resume_rescores_transient_judge_failures_and_keeps_what_succeeded(fake_openai, lab_settings, zoo, tmp_path):
    down = {"on": True}
    fake = fake_openai(reply=judge_or_quote, fault=_failing(500, down))
    settings, judge = _remote(lab_settings, fake, max_consecutive_failures=3)
    out = tmp_path / "run"
    kwargs = dict(judge=judge, rerank=False, progress=False, metrics=METRICS, concurrency=2)
    with pytest.raises(RunStopped) as stopped:  # llm_context_recall answers 500 for every sample
        run_within(BOUND, run_evaluation, zoo, settings, ["bm25"], out, **kwargs)
    message = str(stopped.value)
    assert "HTTP 500" in message and "rag-lab eval --resume" in message and "runs again the samples" in message
    assert message.count("→") == 1  # the stop's own hint, not the provider error's too
    first = _judged(out)
    assert 3 <= len(first) < len(ANIMALS)
    assert all(r["scores"]["faithfulness"] is not None for r in first.values())
    assert all(r["scores"]["llm_context_recall"] is None and "HTTP 500" in r["score_errors"]["llm_context_recall"]
               for r in first.values())

    down["on"] = False  # the judge is back
    before = len(fake.requests)
    run_within(BOUND, run_evaluation, zoo, settings, ["bm25"], out, resume=True, **kwargs)
    records = _judged(out)
    assert sorted(records) == sorted(ANIMALS)
    for metric in ("faithfulness", "llm_context_recall"):
        assert all(r["scores"][metric] is not None for r in records.values()), metric
    summary = load_run(out).summary.set_index("metric")
    assert summary.loc["llm_context_recall", "nan"] == 0 and summary.loc["faithfulness", "nan"] == 0
    # what succeeded was kept: the re-run samples' answers and faithfulness came from the caches
    again = fake.requests[before:]
    fresh = len(ANIMALS) - len(first)
    assert sum(r.prompt.startswith(FAITHFULNESS_PROMPT) for r in again) <= fresh
    assert sum(r.model == settings.llm_model for r in again) <= fresh
    assert sum(r.prompt.startswith(RECALL_PROMPT) for r in again) >= len(ANIMALS)
    assert all(records[i].get("rescored") == 1 for i in first)
    resumes = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["resumes"]
    assert resumes[-1]["rescored"] == {"bm25": len(first)} and resumes[-1]["kept_failures"] == {}


def test_a_refused_judge_is_kept_on_resume_unless_retry_failed(fake_openai, lab_settings, zoo, tmp_path):
    refused = {"on": True}
    fake = fake_openai(reply=judge_or_quote, fault=_failing(401, refused))
    settings, judge = _remote(lab_settings, fake, max_consecutive_failures=0)
    out = tmp_path / "run"
    kwargs = dict(judge=judge, rerank=False, progress=False, metrics=METRICS, concurrency=1, limit=3)
    run_within(BOUND, run_evaluation, zoo, settings, ["bm25"], out, **kwargs)
    assert all(r["scores"]["llm_context_recall"] is None for r in _judged(out).values())

    refused["on"] = False
    before = len(fake.requests)
    run_within(BOUND, run_evaluation, zoo, settings, ["bm25"], out, resume=True, **kwargs)
    assert len(fake.requests) == before  # a 401 will not change on its own: nothing asked again
    assert all(r["scores"]["llm_context_recall"] is None for r in _judged(out).values())
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["resumes"][-1]["kept_failures"] == {"bm25": 3} and manifest["resumes"][-1]["rescored"] == {}

    run_within(BOUND, run_evaluation, zoo, settings, ["bm25"], out, resume=True, retry_failed=True, **kwargs)
    records = _judged(out)
    assert all(r["scores"]["llm_context_recall"] is not None and r["scores"]["faithfulness"] is not None
               for r in records.values())
    resumes = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["resumes"]
    assert resumes[-1] | {"at": None} == {"at": None, "retry_failed": True, "rescored": {"bm25": 3},
                                          "kept_failures": {}}


def test_waiting_for_the_rate_limit_is_not_judging_time(fake_openai, lab_settings, zoo, tmp_path, capsys):
    fake = fake_openai(reply=judge_or_quote)
    # 120 requests a minute (2 a second, 2 at once) for ≈ 24 requests: ≈ 11 s of waiting, while each
    # sample's judged metrics may take 3 s of the provider's time
    settings, judge = _remote(lab_settings, fake, llm_rpm=120, judge_deadline=3)
    out = tmp_path / "run"
    _, elapsed = run_within(BOUND, run_evaluation, zoo, settings, ["bm25"], out, judge=judge, rerank=False,
                            progress=True, metrics=METRICS, concurrency=6)
    records = _judged(out)
    assert len(records) == len(ANIMALS)
    for metric in ("faithfulness", "llm_context_recall"):  # slower, never NaN
        assert all(r["scores"][metric] is not None for r in records.values()), \
            [r["score_errors"] for r in records.values()]
    times = sorted(r.at for r in fake.requests)
    assert len(times) >= 4 * len(ANIMALS)
    assert elapsed >= (len(times) - 2) / 2 - 1  # the limit held: the run took longer instead
    for i, start in enumerate(times):  # never more than the bucket allows in any window
        in_window = sum(1 for t in times[i:] if t - start < 5.0)
        assert in_window <= 2 + 2 * 5.0 + 1, in_window
    err = capsys.readouterr().err
    assert "for the rate limit at" in err and "RAG_LAB_LLM_RPM=120" in err  # the progress line says why


def test_dry_run_counts_the_wait_for_the_rate_limit(fake_openai, lab_settings, zoo, tmp_path):
    fake = fake_openai(reply=judge_or_quote)
    settings, judge = _remote(lab_settings, fake)
    kwargs = dict(judge=judge, rerank=False, progress=False, metrics=METRICS, concurrency=8, dry_run=True)
    free = run_evaluation(zoo, settings, ["bm25"], tmp_path / "dry", **kwargs)
    limited = run_evaluation(zoo, settings.model_copy(update={"llm_rpm": 6}), ["bm25"], tmp_path / "dry", **kwargs)
    calls = limited.answers.calls + limited.judging.calls
    assert free.rate_limit_seconds == 0 and "rate limit" not in free.summary()
    assert limited.seconds >= calls * 10.0 > free.seconds  # 6 a minute: 10 s a call, whatever the concurrency
    assert limited.rate_limit_seconds > 0 and "waiting for the rate limit" in limited.summary()
    assert fake.requests == []


def test_metrics_choose_what_is_scored_and_resume_keeps_the_choice(fake_openai, lab_cli, zoo, tmp_path, monkeypatch):
    fake = fake_openai(reply=judge_or_quote)
    n = next(_names)
    for name, value in {"RAG_LAB_LLM_PROVIDER": "openai_compatible", "RAG_LAB_LLM_BASE_URL": fake.url,
                        "RAG_LAB_LLM_MODEL": f"gen-cli-{n}", "RAG_LAB_JUDGE_BASE_URL": fake.url}.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "run"
    base = ("eval", zoo, "--modes", "bm25", "--no-rerank", "--out", str(out))
    code, printed, err = lab_cli(*base, "--limit", "2", "--metrics", "rouge_l,mrr@10")
    assert code == 0, err
    rows = [line.split()[0] for line in printed.splitlines()[3:] if " · failed " in line]
    assert rows == ["rouge_l", "mrr@10"]  # the table: the chosen metrics, in the registry's order
    assert json.loads((out / "manifest.json").read_text())["config"]["metrics"] == ["rouge_l", "mrr@10"]
    code, _, err = lab_cli(*base, "--limit", "3", "--resume")  # no --metrics: the run's own choice
    assert code == 0, err
    records = read_samples(out / "bm25" / "samples.jsonl")
    assert len(records) == 3 and all(set(r["scores"]) == {"rouge_l", "mrr@10"} for r in records)

    code, _, err = lab_cli(*base, "--metrics", "rouge_l,nope")
    assert code == 2 and "Unknown or missing metric(s): nope" in err and "faithfulness" in err
    code, _, err = lab_cli(*base, "--metrics", "faithfulness")
    assert code == 2 and "faithfulness is judged by an LLM, and this run has no judge" in err
    code, _, err = lab_cli(*base, "--retry-failed")
    assert code == 2 and "use it with --resume" in err

    before = len(fake.requests)
    code, _, err = lab_cli(*base[:-1], str(tmp_path / "judged"), "--limit", "2", "--judge",
                           f"openai_compatible:judge-cli-{n}", "--metrics", "faithfulness,rouge_l")
    assert code == 0, err
    asked = fake.requests[before:]
    assert any(r.prompt.startswith(FAITHFULNESS_PROMPT) for r in asked)
    assert not any(r.prompt.startswith(RECALL_PROMPT) for r in asked)  # a judged metric not chosen: not asked
    records = read_samples(tmp_path / "judged" / "bm25" / "samples.jsonl")
    assert all(set(r["scores"]) == {"faithfulness", "rouge_l"} for r in records)
