"""A failing judge costs one sample bounded time, through the real openai SDK, LlamaIndex and RAGAS
over real HTTP to a fake OpenAI-compatible server on 127.0.0.1 (``OPENAI_BASE_URL``, as a user
would point rag-lab at another server). Each test runs the sample in a thread it waits for at most
60 s, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import io
import json

import pytest
from pydantic import SecretStr

from rag_lab.evaluate.run.runner import judge_settings
from rag_lab.evaluate.run.scorer import Scorer
from rag_lab.models.llm import get_llm
from rag_lab.models.llm.disk_cache import DiskCache
from rag_lab.progress import PlainProgress
from tests.evaluate.test_judged_metrics import JUDGED, _record, judge
from tests.models.fake_openai_server import FakeOpenAI, run_within

BOUND = 60.0  # seconds: one sample finishes in under 60 s


@pytest.fixture
def fake_server(fake_openai, monkeypatch):
    """A fake server that ``OPENAI_BASE_URL`` points the openai provider at."""
    for name in ("OPENAI_API_KEY", "RAG_LAB_LLM_MODEL", "RAG_LAB_LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)

    def start(**behaviour) -> FakeOpenAI:
        server = fake_openai(**behaviour)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        return server

    return start


def _judge(settings):
    """The judge exactly as ``rag-lab eval --judge openai:gpt-4o-mini`` builds it."""
    return get_llm(judge_settings(settings, "openai:gpt-4o-mini"))


def _settings(lab_settings, **update):
    return lab_settings.model_copy(update={"openai_api_key": SecretStr("sk-test-123"), **update})


def _score_bounded(scorer: Scorer, record: dict) -> tuple[dict, dict, float]:
    (scores, errors), elapsed = run_within(BOUND, scorer.score, record)
    return scores, errors, elapsed


def _all_judged_failed(scores: dict, errors: dict) -> None:
    for name in JUDGED:
        assert scores[name] is None, name
        assert errors.get(name), f"{name}: NaN without a reason"
    assert scores["rouge_l"] is not None  # the offline metrics still score


def test_http_500_is_retried_max_retries_times_per_call_and_each_retry_is_shown(fake_server, lab_settings):
    server = fake_server(status=500)
    settings = _settings(lab_settings, max_retries=2)
    scorer = Scorer(settings, judge_llm=_judge(settings))
    stream = io.StringIO()
    with PlainProgress(total=1, desc="bm25", unit="sample", stream=stream, interval=1e9):
        scores, errors, elapsed = _score_bounded(scorer, _record())
    _all_judged_failed(scores, errors)
    assert "HTTP 500" in errors["faithfulness"] and "after 3 attempt(s)" in errors["faithfulness"]
    # one retry layer: every call is tried at most 1 + max_retries times, and no layer repeats calls
    # (before: RAGAS retried each SDK call 10 times, 236 requests, 871 s)
    assert max(r.retry_count for r in server.requests) == 2
    assert len(server.requests) <= 3 * server.first_attempts  # (a call cancelled with its metric makes fewer)
    assert server.first_attempts <= len(JUDGED) + 1  # one call per metric (context precision: one per chunk)
    assert elapsed < BOUND, elapsed
    notes = [line for line in stream.getvalue().splitlines() if "retry" in line]
    assert notes and notes[0].startswith("bm25: OpenAI gpt-4o-mini at http://127.0.0.1:")
    assert "retry 1 of 2 after HTTP 500" in notes[0]
    # the last retries are shown and sent, at most one note per call. Shown and sent are not compared
    # with each other: the note is written as the client starts the request, and a call cancelled with
    # its metric can be shown but never reach the server, or reach it after the sample's bar closed.
    shown = sum("retry 2 of 2 after HTTP 500" in n for n in notes)
    sent = sum(r.retry_count == 2 for r in server.requests)
    assert 1 <= shown <= server.first_attempts and sent >= 1


def test_http_401_fails_at_once_with_the_providers_message(fake_server, lab_settings):
    server = fake_server(status=401)
    settings = _settings(lab_settings)  # default max_retries (3)
    scorer = Scorer(settings, judge_llm=_judge(settings))
    scores, errors, elapsed = _score_bounded(scorer, _record())
    _all_judged_failed(scores, errors)
    assert len(server.requests) == 1  # not retried, and the judge is not asked again (before: 59 requests, 646 s)
    assert all("HTTP 401" in errors[m] and "Incorrect API key provided" in errors[m] for m in JUDGED)
    assert all("sk-test-123" not in e for e in errors.values())
    assert elapsed < 30  # no retry, no backoff: the offline metrics only (a loaded CI core included)
    again, errors_again, _ = _score_bounded(scorer, _record())  # the next sample: still no request
    assert len(server.requests) == 1 and "refused access" in errors_again["faithfulness"]


@pytest.mark.parametrize("junk", [{"junk_body": True}, {"reply": lambda prompt: "no idea, sorry"}],
                         ids=["body-not-json", "reply-not-json"])
def test_junk_replies_fail_the_metric_quickly_with_a_reason(fake_server, lab_settings, junk):
    server = fake_server(**junk)
    settings = _settings(lab_settings)
    scorer = Scorer(settings, judge_llm=_judge(settings))
    scores, errors, elapsed = _score_bounded(scorer, _record())
    _all_judged_failed(scores, errors)
    assert elapsed < BOUND
    # a 200 is not retried by any layer; RAGAS asks once more per unparseable reply to fix its
    # format (at most 3 times, a bounded repair, not a retry). Before: 58 requests, 641 s.
    assert all(r.retry_count == 0 for r in server.requests), [(r.retry_count, r.prompt[:30]) for r in server.requests]
    assert len(server.requests) <= 4 * (len(JUDGED) + 1)


def test_a_hanging_judge_is_cut_off_at_the_sample_deadline(fake_server, lab_settings):
    server = fake_server(hang=True)
    settings = _settings(lab_settings, request_timeout=2.0, judge_deadline=4.0)
    scorer = Scorer(settings, judge_llm=_judge(settings))
    scores, errors, elapsed = _score_bounded(scorer, _record())
    _all_judged_failed(scores, errors)
    assert elapsed < 4.0 + 20.0  # the deadline, plus the offline metrics on a busy core (before: > 1,700 s)
    assert "judge deadline (4 s" in errors["faithfulness"] or "deadline" in errors["faithfulness"]
    assert all("deadline" in errors[m] for m in JUDGED)
    assert len(server.requests) <= 3  # 2 s timeouts with backoff: no more fit in 4 s


def test_judge_cache_is_keyed_by_endpoint(fake_server, lab_settings, tmp_path):
    """A server that answers junk is not served another server's cached scores for the same model."""
    cache = DiskCache(tmp_path / "llm.sqlite")
    settings = _settings(lab_settings)
    fake_server(reply=lambda prompt: json.dumps(judge(prompt)))
    good, errors = Scorer(settings, judge_llm=_judge(settings),
                          cache=cache).score(_record())
    assert errors == {} and good["faithfulness"] == pytest.approx(0.5)

    fake_server(junk_body=True)  # OPENAI_BASE_URL now names another server, same model name
    scores, errors = Scorer(settings, judge_llm=_judge(settings),
                            cache=cache).score(_record())
    _all_judged_failed(scores, errors)
    cache.close()
