"""Statements by sentence (``RAG_LAB_JUDGE_STATEMENTS=by_sentence``): faithfulness's statement splitter
must list every sentence of the answer, in order, each with its own statements; RAGAS verifies them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from rag_lab.config import Settings
from rag_lab.evaluate.judge import judge_id
from rag_lab.evaluate.judge.by_sentence import (MAX_SENTENCES, SentenceStatementPrompt, anchored_output_model,
                                                answer_sentences)
from rag_lab.evaluate.run.scorer import Scorer, to_sample
from tests.evaluate.judge_doubles import ConstrainedLLM

CONTEXT = "Family of 4 | Weekly: $1,770 | Annual: $92,041"
ANSWER = "The weekly limit for a family of 4 is $1,770. The rule dates from 1987."
RECORD = {"id": "q1", "question": "What is the weekly limit for a family of 4?", "answer": ANSWER,
          "reference": "The weekly limit for a family of 4 is $1,770.", "contexts": [{"text": CONTEXT}]}


class SplittingLLM(ConstrainedLLM):
    """Splits each sentence the grammar names into itself (a faithful splitter); a flat statement list
    (RAGAS's own prompt) gets the first sentence only, as the 1.5B splitter did with an added sentence.
    NLI: supported when the statement's last number is in the context."""

    name = "splitting-script"

    def reply(self, prompt: str, **kwargs: Any) -> str:
        schema = kwargs["response_format"]["json_schema"]["schema"]
        props = schema["properties"]
        if "sentences" in props:
            named = [schema["$defs"][item["$ref"].rsplit("/", 1)[1]]["properties"]["sentence"]["const"]
                     for item in props["sentences"]["prefixItems"]]
            return json.dumps({"sentences": [{"sentence": s, "statements": [s]} for s in named]})
        if "statements" in props and props["statements"]["items"].get("type") == "string":
            return json.dumps({"statements": [answer_sentences(ANSWER)[0]]})
        asked = json.loads(prompt.rsplit("input: ", 1)[1].split("\nOutput:")[0].strip())["statements"]
        return json.dumps({"statements": [
            {"statement": s, "reason": "compared", "verdict": int(s.rstrip(".").split()[-1] in CONTEXT)}
            for s in asked]})


def settings(statements: str) -> Settings:
    return Settings(_env_file=None, judge_statements=statements, judge_nli="batch")


def test_answer_sentences_split_prose_and_lines_but_not_decimals_or_amounts():
    answer = ("A family of 3 pays 4.26% of income, i.e. $3,411.50 a month. This rule dates from 1987!\n"
              "- Boards report every 19 months.\n\n1. Parents report changes? Yes.")
    assert answer_sentences(answer) == [
        "A family of 3 pays 4.26% of income, i.e. $3,411.50 a month.", "This rule dates from 1987!",
        "- Boards report every 19 months.", "1. Parents report changes?", "Yes."]
    assert answer_sentences("  \n") == []


def test_the_grammar_fixes_every_sentence_in_order_with_at_least_one_statement():
    sentences = ["First sentence.", "Second sentence."]
    model = anchored_output_model(sentences)
    ok = {"sentences": [{"sentence": s, "statements": [s]} for s in sentences]}
    assert [item.statements for item in model.model_validate(ok).sentences] == [["First sentence."],
                                                                               ["Second sentence."]]
    skipped = {"sentences": ok["sentences"][:1]}
    swapped = {"sentences": ok["sentences"][::-1]}
    empty = {"sentences": [{"sentence": s, "statements": []} for s in sentences]}
    for reply in (skipped, swapped, empty):
        with pytest.raises(ValidationError):
            model.model_validate(reply)
    assert model.judge_max_tokens == 600


def test_a_dropped_sentence_is_verified_when_split_by_sentence():
    ragas_split = SplittingLLM(requests=[])
    scores, errors = Scorer(settings("ragas"), judge_llm=ragas_split, metrics=["faithfulness"]).score(RECORD)
    assert errors == {} and scores["faithfulness"] == 1.0  # the splitter dropped 1987: nothing to catch
    llm = SplittingLLM(requests=[])
    scorer = Scorer(settings("by_sentence"), judge_llm=llm, metrics=["faithfulness"])
    scorer.judge_of("faithfulness").transcript = transcript = []
    scores, errors = scorer.score(RECORD)
    assert errors == {} and scores["faithfulness"] == 0.5  # 1987 is stated, and not in the context
    assert [t["output"] for t in transcript] == ["StatementsBySentence", "NLIStatementOutput"]
    prompt = llm.requests[0]["prompt"]
    assert "no sentence may be left out" in prompt and "Albert Einstein" in prompt  # instruction, example
    assert prompt.count("The rule dates from 1987.") == 1  # the sentences are in the grammar, not repeated


def test_an_answer_longer_than_the_anchor_limit_is_split_by_ragas_prompt():
    long_answer = " ".join(f"Fact {i} is $1,770." for i in range(MAX_SENTENCES + 1))
    llm = SplittingLLM(requests=[])
    record = RECORD | {"answer": long_answer}
    scores, errors = Scorer(settings("by_sentence"), judge_llm=llm, metrics=["faithfulness"]).score(record)
    assert errors == {} and scores["faithfulness"] == 1.0
    assert "sentences" not in llm.requests[0]["response_format"]["json_schema"]["schema"]["properties"]


def test_by_sentence_scores_are_keyed_and_named_apart_and_auto_keeps_ragas_prompt():
    from ragas.metrics._faithfulness import StatementGeneratorPrompt

    sample = to_sample(RECORD)
    scorers = {s: Scorer(settings(s), judge_llm=SplittingLLM(requests=[]), metrics=["faithfulness"])
               for s in ("auto", "ragas", "by_sentence")}
    keys = {s: sc.judge_key(sc.specs[0], sample) for s, sc in scorers.items()}
    assert keys["auto"] == keys["ragas"] != keys["by_sentence"]
    assert type(scorers["auto"]._metric(scorers["auto"].specs[0]).statement_generator_prompt) is StatementGeneratorPrompt
    local = Settings(_env_file=None, llm_provider="local", judge_statements="by_sentence")
    assert judge_id(local).endswith(f"+{SentenceStatementPrompt.design}")
    assert SentenceStatementPrompt.design not in judge_id(Settings(_env_file=None, llm_provider="local"))
    # factual correctness has no statement splitter of this kind: unchanged
    fc = {s: Scorer(settings(s), judge_llm=SplittingLLM(requests=[]), metrics=["factual_correctness"])
          for s in ("ragas", "by_sentence")}
    assert len({sc.judge_key(sc.specs[0], sample) for sc in fc.values()}) == 1
