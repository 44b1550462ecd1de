"""CitedQueryEngine on the real texas_childcare index (and a stubbed Kendra) with a scripted LLM:
the shared prompt, citations, no LLM call without results, rerank keep/fail, context fitting."""

from __future__ import annotations

import pytest

from rag_lab.answer import NO_ANSWER, Source, build_engine
from rag_lab.errors import ConfigError
from rag_lab.retrieve.kendra import NOT_CONFIGURED_MESSAGE
from tests.answer.conftest import INCOME_FILE, INCOME_QUESTION, by_task
from tests.retrieve.kendra_stub import KendraStub, result_item

INCOME_HEADER = f"[Doc 1: {INCOME_FILE}, Page 1]\n"
INCOME_URL = f"https://www.twc.texas.gov/sites/default/files/ccel/docs/{INCOME_FILE}"
CITED = "The limit is $4,106 [Doc 1]."


@pytest.fixture
def engine_for(lab_settings, texas_index):
    """``engine_for(mode, llm, **kw)``: the registry's retriever for ``mode`` on texas_childcare."""
    def make(mode: str, llm, top_k: int = 3, compress: str = "off", **kwargs):
        kwargs.setdefault("rerank", False)
        settings = lab_settings.model_copy(update={"compress": compress})  # whole chunks unless asked
        return build_engine(mode, settings, "texas_childcare", llm=llm, top_k=top_k, prefetch=20, **kwargs)
    return make


@pytest.mark.parametrize("mode", ["dense", "bm25", "fusion", "hybrid"])
def test_index_modes_answer_through_the_shared_prompt(engine_for, scripted, mode) -> None:
    llm = scripted(CITED)
    response = engine_for(mode, llm).query(INCOME_QUESTION)
    assert len(llm.prompts) == 1
    prompt = llm.prompts[0]
    assert prompt.startswith("Answer the question using only the numbered documents below.")
    assert INCOME_HEADER in prompt and "[Doc 3: " in prompt and "[Doc 4" not in prompt
    assert prompt.endswith(f"Question: {INCOME_QUESTION}\nAnswer: ")
    assert response.response == CITED
    assert response.metadata["cited_sources"] == [Source(INCOME_FILE, 1, INCOME_URL)]
    assert response.metadata["mode"] == mode and response.metadata["response_type"] == "answer"
    assert [r.node.metadata["filename"] for r in response.source_nodes][0] == INCOME_FILE
    info = response.metadata["rerank"]
    assert (info.status, info.reason, info.candidates, info.kept) == ("skipped", "disabled", 3, 3)


def test_uncited_answer_cites_nothing_and_hybrid_explains(engine_for, scripted) -> None:
    response = engine_for("hybrid", scripted("The limit is $4,106."), explain=True).query(INCOME_QUESTION)
    assert response.metadata["cited_sources"] == []
    assert len(response.source_nodes) == 3
    assert all(r.node.metadata["explanation"]["fused_score"] > 0 for r in response.source_nodes)


def test_no_results_answers_without_calling_the_llm(engine_for, scripted) -> None:
    llm = scripted(CITED)
    response = engine_for("bm25", llm).query("zqxjv wkpfy qqzzx")
    assert llm.prompts == []
    assert response.response == NO_ANSWER
    assert response.source_nodes == [] and response.metadata["cited_sources"] == []
    assert response.metadata["response_type"] == "no_results"


def test_rerank_keeps_n_in_the_llms_order(engine_for, scripted) -> None:
    llm = scripted(by_task(CITED, rerank="Doc: 3, Relevance: 9\nDoc: 1, Relevance: 4"))
    candidates = [r.node.node_id for r in engine_for("fusion", llm, top_k=5).retriever.retrieve(INCOME_QUESTION)]
    response = engine_for("fusion", llm, top_k=5, top_n=2, rerank=True).query(INCOME_QUESTION)
    assert len(llm.rerank_prompts) == 1 and len(llm.answer_prompts) == 1
    assert [r.node.node_id for r in response.source_nodes] == [candidates[2], candidates[0]]
    assert [r.node.metadata["rerank_score"] for r in response.source_nodes] == [9.0, 4.0]
    info = response.metadata["rerank"]
    assert (info.status, info.candidates, info.kept, info.picked) == ("applied", 5, 2, 2)
    assert "[Doc 2: " in llm.answer_prompts[0] and "[Doc 3: " not in llm.answer_prompts[0]
    assert f"[Doc 2: {INCOME_FILE}, Page 1]" in llm.answer_prompts[0]


def test_rerank_failure_is_recorded_and_retrieval_order_kept(engine_for, scripted) -> None:
    llm = scripted(by_task(CITED, rerank="Sure! The documents are about child care."))
    response = engine_for("dense", llm, top_k=5, top_n=2, rerank=True).query(INCOME_QUESTION)
    info = response.metadata["rerank"]
    assert (info.status, info.kept, info.picked) == ("failed", 2, 0)
    assert info.reason.startswith("RerankParseError") and "child care" in info.reason
    assert INCOME_HEADER in llm.answer_prompts[0] and response.response == CITED


def test_chunks_beyond_the_context_window_are_dropped_and_said(engine_for, scripted) -> None:
    llm = scripted(CITED, context_window=1200)
    response = engine_for("fusion", llm, top_k=4, top_n=4).query(INCOME_QUESTION)
    info = response.metadata["rerank"]
    assert 1 <= len(response.source_nodes) < 4 and info.kept == len(response.source_nodes)
    assert f"context window fits {info.kept} of 4 chunks" in info.reason
    assert f"[Doc {info.kept + 1}: " not in llm.prompts[0]


def kendra_items() -> list[dict]:
    return [
        result_item("s3://kb/guide.pdf", "Rotate access keys every 90 days.", title="guide.pdf",
                    uri="https://kb.example.com/guide.pdf", page=3),
        result_item("https://wiki.example.com/kb/keys", "Use IAM roles instead of long-lived keys.",
                    title="KB keys", uri="https://wiki.example.com/kb/keys"),
    ]


def test_kendra_answers_through_the_shared_generator_never_reranked(lab_settings, scripted) -> None:
    stub = KendraStub({"how often rotate keys?": kendra_items(), "nothing here": []})
    llm = scripted(by_task("Every 90 days [Doc 1]; prefer roles [Doc 2]."))
    engine = build_engine("kendra", lab_settings, retriever=stub.retriever(top_k=5), llm=llm, rerank=True)
    response = engine.query("how often rotate keys?")
    assert stub.requests[-1]["PageSize"] == 5
    assert llm.rerank_prompts == [] and len(llm.answer_prompts) == 1
    assert "[Doc 1: guide.pdf, Page 3]\nRotate access keys every 90 days." in llm.prompts[0]
    assert "[Doc 2: KB keys]\nUse IAM roles" in llm.prompts[0]
    assert response.metadata["cited_sources"] == [Source("guide.pdf", 3, "https://kb.example.com/guide.pdf"),
                                            Source("KB keys", None, "https://wiki.example.com/kb/keys")]
    assert response.metadata["rerank"].reason == "kendra ranks internally"
    empty = engine.query("nothing here")
    assert empty.response == NO_ANSWER and len(llm.prompts) == 1


def test_kendra_not_configured_fails_before_loading_an_llm(lab_settings, monkeypatch) -> None:
    import rag_lab.models.llm as llm_module

    monkeypatch.setattr(llm_module, "get_llm", lambda *a, **k: pytest.fail("LLM built before the config check"))
    settings = lab_settings.model_copy(update={"kendra_index_id": None})
    with pytest.raises(ConfigError, match=NOT_CONFIGURED_MESSAGE.split(":")[0]):
        build_engine("kendra", settings)
    with pytest.raises(ConfigError, match="make_answerer"):
        build_engine("agent", settings)


def test_answer_reports_stage_timings(texas_index, lab_settings):
    from rag_lab.answer.adapter import make_answerer
    from rag_lab.answer.types import Answer
    from tests.answer.conftest import ScriptedLLM

    answerer = make_answerer("bm25", lab_settings, "texas_childcare", rerank=False, top_k=3, top_n=2,
                             llm=ScriptedLLM(script="The limit is $4,106 [Doc 1]."))
    answer: Answer = answerer.query("bi-weekly income limit family of 5")
    assert set(answer.timings) == {"retrieve", "rerank", "generate"}
    assert all(v >= 0 for v in answer.timings.values())
    assert sum(answer.timings.values()) <= answer.response_time + 1e-6


def test_compression_shows_the_llm_the_matching_table_row_only(engine_for, scripted) -> None:
    """compress=on: the prompt holds the BCY row for a family of 5, cut to its Bi-Weekly cell, not
    the other 29 rows; chunks, their order and the citations are the retriever's (and all 4 fit
    the window, where whole chunks may not)."""
    plain = engine_for("fusion", scripted(CITED), top_k=4, top_n=4).query(INCOME_QUESTION)
    llm = scripted(CITED)
    response = engine_for("fusion", llm, top_k=4, top_n=4, compress="on").query(INCOME_QUESTION)
    prompt = llm.prompts[0]
    assert "Income Eligibility Limits | Family Size 5 | Bi-Weekly: $4,106" in prompt
    assert "Family Size 4" not in prompt and "$106,768" not in prompt
    ids = [n.node.node_id for n in response.source_nodes]
    assert len(ids) == 4 and ids[:len(plain.source_nodes)] == [n.node.node_id for n in plain.source_nodes]
    assert response.metadata["cited_sources"] == [Source(INCOME_FILE, 1, INCOME_URL)]
    stats = response.metadata["compression"]
    assert stats["lines_kept"] < stats["lines_before"] and stats["chars_after"] < stats["chars_before"] / 4
    assert "compression" not in plain.metadata


def test_compression_is_on_by_default_for_the_local_models_only(lab_settings) -> None:
    assert lab_settings.llm_provider == "local" and lab_settings.compress == "auto"
    assert lab_settings.context_lines == lab_settings.compress_lines == 12
    assert lab_settings.model_copy(update={"llm_provider": "openai"}).context_lines is None
    assert lab_settings.model_copy(update={"compress": "off"}).context_lines is None
    assert lab_settings.model_copy(update={"llm_provider": "groq", "compress": "on"}).context_lines == 12


def test_an_llm_with_constrained_output_gets_the_json_prompt_and_schema(engine_for, scripted) -> None:
    """The local models' free-form path (answer style "free"; their default, "evidence", is
    tests/answer/test_answer_style.py's): the JSON prompt (not the text prompt's "[Doc 1]" example,
    which a small model copies instead of answering), the answer schema, and the reply rendered as citations."""
    from rag_lab.answer.prompt import ANSWER_JSON_PROMPT_TMPL, ANSWER_SCHEMA

    class Constrained(type(scripted())):
        supports_constrained_output: bool = True
        schemas: list = []

        def complete(self, prompt: str, formatted: bool = False, **kwargs):
            self.schemas.append(kwargs.get("json_schema"))
            return super().complete(prompt, formatted, **kwargs)

    llm = Constrained(script='{"answer": "The limit is $4,106.", "cited": [1]}')
    engine = engine_for("bm25", llm)
    assert engine.answer_style == "evidence"  # auto: a model whose decoding a schema constrains
    engine.answer_style = "free"
    response = engine.query(INCOME_QUESTION)
    prompt = llm.prompts[0]
    assert prompt.startswith(ANSWER_JSON_PROMPT_TMPL.split("{context_str}")[0]) and 'Reply in JSON' in prompt
    assert "for example [Doc 1]" not in prompt and prompt.endswith(f"Question: {INCOME_QUESTION}\n")
    assert llm.schemas == [ANSWER_SCHEMA]
    assert response.response == f"The limit is $4,106. {INCOME_HEADER.strip()}"
    assert response.metadata["cited_sources"] == [Source(INCOME_FILE, 1, INCOME_URL)]
