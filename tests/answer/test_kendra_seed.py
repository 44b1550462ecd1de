"""Kendra as the seed specifies: Retrieve API top 5 (KENDRA_TOP_K), no rerank, every passage
straight to the shared generator. A real boto3 client under botocore's Stubber checks what is sent."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from rag_lab.answer import make_answerer
from rag_lab.config import load_settings
from tests.answer.conftest import ScriptedLLM, by_task
from tests.retrieve.kendra_stub import STUB_INDEX_ID, STUB_REGION, result_item, set_dummy_aws_env

QUESTION = "How often should access keys be rotated?"


def _items(n: int) -> list[dict]:
    return [
        {"Id": f"q-{i}", **result_item(f"s3://kb/doc-{i}.pdf", f"Passage {i}: rotate keys every {30 * i} days.",
                                       title=f"doc-{i}.pdf", page=i, confidence="HIGH")}
        for i in range(1, n + 1)
    ]


@pytest.fixture
def kendra_client(monkeypatch):
    set_dummy_aws_env(monkeypatch)
    client = boto3.client("kendra", region_name=STUB_REGION)
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _settings(tmp_path, **extra):
    return load_settings(data_dir=tmp_path, kendra_index_id=STUB_INDEX_ID, kendra_region=STUB_REGION, **extra)


def test_default_is_retrieve_top_5_no_rerank_all_to_the_generator(kendra_client, tmp_path):
    client, stubber = kendra_client
    stubber.add_response("retrieve", {"QueryId": "q", "ResultItems": _items(5)},
                         expected_params={"IndexId": STUB_INDEX_ID, "QueryText": QUESTION, "PageSize": 5})
    llm = ScriptedLLM(script=by_task("Every 30 days [Doc 1]."))
    settings = _settings(tmp_path)
    assert settings.kendra_top_k == 5
    # rerank=True is asked for and must still not happen: Kendra ranks internally.
    answer = make_answerer("kendra", settings, llm=llm, rerank=True, client=client).query(QUESTION)
    assert llm.rerank_prompts == [] and len(llm.answer_prompts) == 1  # no rerank call, one generation
    assert [c.filename for c in answer.chunks] == [f"doc-{i}.pdf" for i in range(1, 6)]  # all 5, Kendra's order
    for i in range(1, 6):
        assert f"[Doc {i}: doc-{i}.pdf, Page {i}]" in llm.answer_prompts[0]
    assert answer.rerank.status == "skipped" and answer.rerank.reason == "kendra ranks internally"
    assert (answer.rerank.candidates, answer.rerank.kept) == (5, 5)
    assert [s.doc for s in answer.cited_sources] == ["doc-1.pdf"]
    assert len(answer.retrieved_sources) == 5


def test_kendra_top_k_setting(kendra_client, tmp_path, monkeypatch):
    client, stubber = kendra_client
    stubber.add_response("retrieve", {"QueryId": "q", "ResultItems": _items(3)},
                         expected_params={"IndexId": STUB_INDEX_ID, "QueryText": QUESTION, "PageSize": 3})
    monkeypatch.setenv("KENDRA_TOP_K", "3")
    settings = _settings(tmp_path)
    assert settings.kendra_top_k == 3
    llm = ScriptedLLM(script=by_task("Every 30 days [Doc 1]."))
    answer = make_answerer("kendra", settings, llm=llm, client=client).query(QUESTION)
    assert len(answer.chunks) == 3 and llm.rerank_prompts == []

