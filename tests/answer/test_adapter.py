"""The evaluation adapter: Response → Answer, time and token usage, and the agent's plug."""

from __future__ import annotations

import json
import sys
import types

from rag_lab.answer import NO_ANSWER, Answer, Source, make_answerer
from tests.answer.conftest import INCOME_FILE, INCOME_QUESTION


def test_engine_answer_is_complete_and_json_ready(lab_settings, texas_index, scripted) -> None:
    llm = scripted("The limit is $4,106 [Doc 1].")
    answerer = make_answerer("fusion", lab_settings, "texas_childcare", rerank=False, llm=llm, top_k=2, prefetch=20)
    answer = answerer.query(INCOME_QUESTION)
    assert isinstance(answer, Answer) and answerer.mode == "fusion"
    assert (answer.mode, answer.response_type, answer.question) == ("fusion", "answer", INCOME_QUESTION)
    assert [s.doc for s in answer.sources] == [INCOME_FILE] and answer.sources[0].page == 1
    assert answer.response_time > 0
    words = len(llm.prompts[0].split())
    assert answer.usage == {"prompt_tokens": words, "completion_tokens": 6, "total_tokens": words + 6,
                            "calls": 1, "calls_without_usage": 0}
    first = answer.chunks[0]
    assert [c.rank for c in answer.chunks] == [1, 2]
    assert (first.filename, first.page) == (INCOME_FILE, 1) and first.doc_id
    assert "$4,106" in first.text and first.explanation["dense_rank"] is not None
    data = json.loads(json.dumps(answer.to_dict()))
    assert set(data) == {"answer", "sources", "cited_sources", "retrieved_sources", "cites", "mode",
                         "response_type", "response_time", "usage", "chunks", "rerank", "question", "timings",
                         "tool_calls", "evidence", "figure_citations"}
    assert data["tool_calls"] == []  # only the agent makes tool calls
    assert data["cites"] and data["cited_sources"] == data["sources"]
    assert data["sources"][0]["doc"] == INCOME_FILE and data["rerank"]["status"] == "skipped"
    assert set(data["chunks"][0]) == {"rank", "score", "doc_id", "filename", "page", "text", "explanation",
                                      "rerank_score"}


def test_uncited_answer_keeps_cited_and_retrieved_apart(lab_settings, texas_index, scripted) -> None:
    llm = scripted("The limit is $4,106.")
    answer = make_answerer("bm25", lab_settings, "texas_childcare", rerank=False, llm=llm, top_k=3).query(INCOME_QUESTION)
    assert answer.cited_sources == [] and not answer.cites
    assert len(answer.retrieved_sources) >= 1 and answer.sources == answer.retrieved_sources
    data = answer.to_dict()
    assert data["cited_sources"] == [] and data["cites"] is False
    assert [s["doc"] for s in data["retrieved_sources"]] == [s.doc for s in answer.retrieved_sources]


def test_no_results_answer(lab_settings, texas_index, scripted) -> None:
    llm = scripted("unused")
    answer = make_answerer("bm25", lab_settings, "texas_childcare", llm=llm).query("zqxjv wkpfy qqzzx")
    assert (answer.answer, answer.response_type, answer.sources, answer.chunks) == (NO_ANSWER, "no_results", [], [])
    assert answer.usage["calls"] == 0 and llm.prompts == []


def test_agent_plugs_into_the_same_adapter(lab_settings, scripted, monkeypatch) -> None:
    llm = scripted("agent says hi")
    seen = {}

    class RagAgent:  # the contract of rag_lab/answer/agent.py
        def __init__(self, settings, dataset=None, llm=None, **params):
            seen.update(settings=settings, dataset=dataset, params=params)
            self.llm = llm

        def chat(self, question: str) -> Answer:
            text = self.llm.complete(question).text
            return Answer(answer=text, cited_sources=[Source("a.pdf", 2)], retrieved_sources=[Source("a.pdf", 2)],
                          mode="agent", response_type="agent")

    monkeypatch.setitem(sys.modules, "rag_lab.answer.agent", types.SimpleNamespace(RagAgent=RagAgent))
    answerer = make_answerer("agent", lab_settings, "texas_childcare", llm=llm, max_steps=3)
    answer = answerer.query("hello?")
    assert answerer.mode == "agent" and seen["dataset"] == "texas_childcare" and seen["params"] == {"max_steps": 3}
    assert (answer.answer, answer.mode, answer.response_type) == ("agent says hi", "agent", "agent")
    assert answer.question == "hello?" and answer.sources == [Source("a.pdf", 2)]
    assert answer.usage["calls"] == 1 and answer.usage["total_tokens"] == 4 and answer.response_time > 0
