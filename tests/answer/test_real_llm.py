"""Every engine kind with the REAL local model (SmolLM2 via get_llm), kept small: 2 chunks, a
768-token window, 32-token answers, rerank off except in one test. A 135M model's answers are
not judged here, only that the pipeline produces an answer, sources with pages, and usage."""

from __future__ import annotations

import pytest

from rag_lab.answer import make_answerer
from tests.answer.conftest import INCOME_FILE, INCOME_QUESTION
from tests.retrieve.kendra_stub import KendraStub, result_item


def check(answer, mode: str, llm_calls: int = 1) -> None:
    assert answer.mode == mode and answer.response_type == "answer"
    assert answer.answer.strip()
    assert answer.sources and all(s.doc and s.page is not None for s in answer.sources)
    assert answer.usage["calls"] == llm_calls
    assert answer.usage["prompt_tokens"] > 0 and answer.usage["completion_tokens"] > 0
    assert answer.response_time > 0


@pytest.mark.parametrize("mode", ["dense", "bm25", "fusion", "hybrid"])
def test_index_modes_with_the_real_model(lab_settings, texas_index, real_llm, mode) -> None:
    answerer = make_answerer(mode, lab_settings, "texas_childcare", rerank=False, llm=real_llm, top_k=2, prefetch=20)
    answer = answerer.query(INCOME_QUESTION)
    check(answer, mode)
    assert INCOME_FILE in {s.doc for s in answer.sources}


def test_kendra_with_the_real_model(lab_settings, real_llm) -> None:
    question = "What is the maximum bi-weekly income for a family of 5?"
    stub = KendraStub({question: [result_item(
        "s3://twc/income.pdf", "Family size 5: maximum bi-weekly income $4,106; monthly $8,896.",
        title=INCOME_FILE, uri="https://twc.example/income.pdf", page=1)]})
    answer = make_answerer("kendra", lab_settings, llm=real_llm, retriever=stub.retriever(top_k=2)).query(question)
    check(answer, "kendra")
    assert answer.sources[0].doc == INCOME_FILE and answer.rerank.reason == "kendra ranks internally"


def test_real_rerank(lab_settings, texas_index, real_llm) -> None:
    answerer = make_answerer("fusion", lab_settings, "texas_childcare", rerank=True, llm=real_llm,
                             top_k=3, top_n=1, prefetch=20)
    answer = answerer.query(INCOME_QUESTION)
    check(answer, "fusion", llm_calls=2)  # one choice-select batch, one answer
    info = answer.rerank
    assert info.status in ("applied", "failed") and info.candidates == 3 and info.kept == len(answer.chunks) == 1
    assert info.status == "applied" or info.reason  # a failure always says why
