"""The acceptance question with the REAL default local model (Qwen2.5-Coder-1.5B, compressed
context): fusion and the agent both answer $4,106 and cite the BCY-26 income PDF, page 1.
≈ 1 min on two cores: the one place where an answer's content, not just its shape, is checked."""

from __future__ import annotations

import pytest

from rag_lab.answer import make_answerer
from rag_lab.config import DEFAULT_LLM_MODELS
from tests.answer.conftest import INCOME_FILE

QUESTION = "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"


@pytest.fixture(scope="module")
def default_llm(lab_settings):
    from rag_lab.models.llm import get_llm

    assert lab_settings.llm_model_name == DEFAULT_LLM_MODELS["local"] == "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M"
    return get_llm(lab_settings)


@pytest.mark.parametrize("mode", ["fusion", "agent"])
def test_the_default_model_reads_the_bcy_table(lab_settings, texas_index, default_llm, mode) -> None:
    answer = make_answerer(mode, lab_settings, "texas_childcare", llm=default_llm).query(QUESTION)
    assert "4,106" in answer.answer, answer.answer
    assert (INCOME_FILE, 1) in {(s.doc, s.page) for s in answer.cited_sources}, answer.cited_sources
    if mode == "agent":
        [call] = answer.tool_calls
        assert not call["fallback"] and call["query"].strip(), call  # the model's own, usable query
