"""LLM-judged RAGAS metrics through the real OpenAI SDK (httpx.MockTransport at the HTTP layer).

The mock judge answers each RAGAS prompt the way a careful judge would, by a rule we can check by
hand: a statement is supported by a text when every money amount it states appears in that text.
"""

from __future__ import annotations

import json
import re

import httpx
import pytest

from rag_lab.config import Settings
from rag_lab.evaluate.run.scorer import Scorer
from rag_lab.models.llm import get_llm
from rag_lab.models.llm.disk_cache import DiskCache

QUESTION = "What is the annual income limit for a family of 4 in BCY 2026?"
ANSWER = "The annual limit for a family of 4 is $92,041. The weekly limit is $9,999."
REFERENCE = "The annual income limit for a family of 4 is $92,041. This translates to $1,770 weekly."
CONTEXTS = ["Parents pay a share of cost based on income.", "Family of 4: annual income limit $92,041."]
JUDGED = {"faithfulness", "response_relevancy", "llm_context_precision_with_reference", "llm_context_recall",
          "factual_correctness"}


def _money(text: str) -> set[str]:
    return set(re.findall(r"\$[\d,]+", text))


def _supported(statement: str, text: str) -> int:
    return int(_money(statement) <= _money(text))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=\.)\s+", text) if s.strip()]


def judge(prompt: str) -> dict:
    data = json.loads(prompt.rsplit("input: ", 1)[1].rsplit("Output: ", 1)[0])
    if prompt.startswith("Given a question and an answer, analyze the complexity"):
        return {"statements": _sentences(data["answer"])}
    if prompt.lstrip().startswith("Decompose and break down"):
        return {"claims": _sentences(data["response"])}
    if prompt.startswith("Your task is to judge the faithfulness"):
        return {"statements": [{"statement": s, "reason": "amounts", "verdict": _supported(s, data["context"])}
                               for s in data["statements"]]}
    if prompt.startswith("Generate a question for the given answer"):
        return {"question": QUESTION, "noncommittal": 0}
    if prompt.startswith("Given question, answer and context verify"):
        return {"reason": "has the amount", "verdict": int("$92,041" in data["context"])}
    if prompt.startswith("Given a context, and an answer, analyze each sentence"):
        return {"classifications": [{"statement": s, "reason": "amounts", "attributed": _supported(s, data["context"])}
                                    for s in _sentences(data["answer"])]}
    raise AssertionError(f"unexpected judge prompt: {prompt[:120]}")


def judge_or_quote(prompt: str) -> str:
    """A scripted server's reply: the judge's JSON for a RAGAS prompt, else a generator's answer
    quoting a chunk (see tests/evaluate/conftest.py:quoting_answer)."""
    from tests.evaluate.conftest import quoting_answer

    try:
        return json.dumps(judge(prompt))
    except Exception:  # noqa: BLE001 - not a judge prompt
        return quoting_answer(prompt)


class JudgeServer:
    def __init__(self) -> None:
        self.requests: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        prompt = body["messages"][-1]["content"]
        text = json.dumps(judge(prompt if isinstance(prompt, str) else prompt[0]["text"]))
        return httpx.Response(200, json={
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1_730_000_000, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text, "refusal": None}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})


@pytest.fixture
def judge_llm(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RAG_LAB_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    server = JudgeServer()
    settings = Settings(_env_file=None, llm_provider="openai", llm_model="gpt-4o-mini", openai_api_key="sk-test-123")
    return get_llm(settings, http_client=httpx.Client(transport=httpx.MockTransport(server)),
                   async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(server))), server


def _record() -> dict:
    return {"id": "q1", "question": QUESTION, "answer": ANSWER, "reference": REFERENCE,
            "contexts": [{"rank": i, "doc_id": f"d{i}.pdf", "filename": f"d{i}.pdf", "page": 1, "text": t}
                         for i, t in enumerate(CONTEXTS, start=1)], "relevant": {"d2.pdf": 1}}


def test_judged_metrics_with_hand_checked_values(judge_llm, lab_settings, tmp_path):
    llm, server = judge_llm
    cache = DiskCache(tmp_path / "llm.sqlite")
    scorer = Scorer(lab_settings, judge_llm=llm, cache=cache)
    assert JUDGED <= set(scorer.metric_names)
    scores, errors = scorer.score(_record())
    assert errors == {}
    assert scores["faithfulness"] == pytest.approx(0.5)  # $92,041 is in the contexts, $9,999 is not
    assert scores["llm_context_precision_with_reference"] == pytest.approx(0.5)  # useful chunk ranked 2nd
    assert scores["llm_context_recall"] == pytest.approx(0.5)  # $1,770 is in no context
    assert scores["factual_correctness"] == pytest.approx(0.5)  # tp 1, fp 1 ($9,999), fn 1 ($1,770)
    assert scores["response_relevancy"] == pytest.approx(1.0, abs=1e-4)  # regenerated question = the question
    assert scores["id_context_precision"] == 0.5 and scores["id_context_recall"] == 1.0  # offline ones too
    assert all(r["model"] == "gpt-4o-mini" for r in server.requests)
    # the judge keeps its own settings: RAGAS's per-call n / temperature 0.01 / stop are not sent
    assert all(r.get("temperature") == 0.0 and "n" not in r and "stop" not in r for r in server.requests)

    calls = len(server.requests)
    again, _ = scorer.score(_record())  # judged scores come from the disk cache now
    assert len(server.requests) == calls and again == scores
    cache.close()


def test_an_unparseable_judge_reply_is_a_counted_failure_not_a_score(lab_settings, monkeypatch):
    def garbage(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        return httpx.Response(200, json={
            "id": "x", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "no idea"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = Settings(_env_file=None, llm_provider="openai", llm_model="gpt-4o-mini", openai_api_key="sk-test-123",
                        max_retries=0)
    llm = get_llm(settings, http_client=httpx.Client(transport=httpx.MockTransport(garbage)),
                  async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(garbage)))
    scorer = Scorer(lab_settings, judge_llm=llm, metrics=["faithfulness", "rouge_l"])
    scores, errors = scorer.score(_record())
    assert scores["faithfulness"] is None and "faithfulness" in errors
    assert scores["rouge_l"] is not None and "rouge_l" not in errors
