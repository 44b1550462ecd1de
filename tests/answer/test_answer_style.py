"""`--answer-style` (auto | evidence | free): parsed by `ask` and `eval`, resolved per generator, part of the answer key."""

from __future__ import annotations

import pytest

from rag_lab.answer.evidence_answer import resolve_answer_style
from rag_lab.cli.ask import with_answer_style
from rag_lab.cli.main import build_parser
from rag_lab.config import Settings
from rag_lab.evaluate.ablation.answers import generator_id
from rag_lab.evaluate.plan.answering import CachedAnswerer, answer_inputs, model_id
from tests.answer.conftest import ScriptedLLM


def _settings(**kw) -> Settings:
    return Settings(_env_file=None, **kw)


@pytest.mark.parametrize("command", [["ask", "texas_childcare", "q?"], ["eval", "texas_childcare"]])
def test_the_flag_is_parsed_and_applied(command):
    from rag_lab.cli.ask import ANSWER_STYLES
    from rag_lab.config import ANSWER_STYLES as SETTINGS_STYLES

    assert ANSWER_STYLES == SETTINGS_STYLES  # the flag takes every style the settings take (auto too)
    for style in ANSWER_STYLES:
        args = build_parser().parse_args([*command, "--answer-style", style])
        assert args.answer_style == style
        assert with_answer_style(_settings(), args.answer_style).answer_style == style
    unset = build_parser().parse_args(command)
    assert unset.answer_style is None and with_answer_style(_settings(), None).answer_style == "auto"


@pytest.mark.parametrize("command", [["ask", "texas_childcare", "q?"], ["eval", "texas_childcare"]])
def test_an_unknown_style_is_refused_at_the_command_line(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([*command, "--answer-style", "terse"])
    assert exit_info.value.code == 2
    assert "argument --answer-style: invalid choice: 'terse'" in capsys.readouterr().err


class ConstrainedLLM(ScriptedLLM):
    """A scripted LLM that says, as the local models do, that a schema constrains its decoding."""

    @property
    def supports_constrained_output(self) -> bool:
        return True


def test_auto_is_evidence_for_a_local_model_and_free_for_any_other():
    assert resolve_answer_style("auto", ConstrainedLLM()) == "evidence"
    assert resolve_answer_style("auto", ScriptedLLM()) == "free"
    assert resolve_answer_style("free", ConstrainedLLM()) == "free"
    assert resolve_answer_style("evidence", ScriptedLLM()) == "evidence"
    assert _settings(llm_provider="local").resolved_answer_style == "evidence"
    assert _settings(llm_provider="openai").resolved_answer_style == "free"


def _answer_key(settings: Settings) -> str:
    inputs = answer_inputs(settings, rerank=False, params={}, index="ix")
    return CachedAnswerer("hybrid", lambda: None, model_id=model_id(settings), inputs=inputs, cache=None).key("q?")


def test_another_answer_style_misses_the_answer_cache():
    local = _settings(llm_provider="local")
    evidence, free = (local.model_copy(update={"answer_style": s}) for s in ("evidence", "free"))
    assert _answer_key(evidence) != _answer_key(free)
    assert generator_id(evidence) != generator_id(free)  # the ablation's answer cache too
    assert _answer_key(local) == _answer_key(evidence)  # auto = evidence for the local model: the same answers
    # a cloud generator's free answers keep the key they had before the style joined it
    cloud = _settings(llm_provider="openai")
    assert "answer_style" not in answer_inputs(cloud, rerank=False, params={}, index="ix")
    assert _answer_key(cloud) == _answer_key(cloud.model_copy(update={"answer_style": "free"}))


def test_the_engine_in_evidence_style_returns_line_citations_in_the_answer():
    import json

    from llama_index.core.base.base_retriever import BaseRetriever

    from rag_lab.answer.adapter import AnswerPipeline
    from rag_lab.answer.engine import CitedQueryEngine
    from tests.answer.conftest import INCOME_FILE, INCOME_QUESTION
    from tests.answer.test_evidence import CHUNKS

    class Fixed(BaseRetriever):
        def _retrieve(self, query_bundle):
            return list(CHUNKS)

    def script(prompt: str) -> str:  # cite the evidence line that holds the family-size-5 income row
        number = next(line.split("]")[0][1:] for line in prompt.splitlines()
                      if line.startswith("[") and "Income Eligibility Limits | Family Size 5" in line)
        return json.dumps({"answer": "The limit is $4,106 bi-weekly.", "lines": [int(number)]})

    llm = ConstrainedLLM(script=script)
    engine = CitedQueryEngine(retriever=Fixed(), llm=llm, mode="bm25", answer_style="evidence", structured=False)
    answer = AnswerPipeline(engine).query(INCOME_QUESTION)
    assert answer.answer.startswith("The limit is $4,106 bi-weekly.")
    assert [s.doc for s in answer.cited_sources] == [INCOME_FILE]
    assert {"figure": "dollar_4106", "doc": 2, "first_line": 6, "last_line": 6} .items() <= answer.figure_citations[0].items()
    data = answer.to_dict()
    assert data["figure_citations"][0]["text"].startswith("Income Eligibility Limits | Family Size 5")
    assert len(data["evidence"]) >= 2 and "numbered documents" not in llm.prompts[0]  # the evidence prompt, not the chunks'
