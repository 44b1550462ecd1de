"""Per-statement NLI (``RAG_LAB_JUDGE_NLI=per_statement``): RAGAS's NLI prompt asked once per
statement, verdicts joined in order, scored by RAGAS; its scores are cached apart from batch ones."""

from __future__ import annotations

import json
from typing import Any


from rag_lab.config import Settings
from rag_lab.evaluate.judge import judge_id
from rag_lab.evaluate.run.scorer import Scorer
from tests.evaluate.judge_doubles import ConstrainedLLM

STATEMENTS = ["The weekly limit is $1,770.", "The limit applies to a family of 4.", "The program started in 1990."]
RECORD = {"id": "q1", "question": "What is the weekly limit for a family of 4?",
          "answer": "For a family of 4 the weekly limit is $1,770. The program started in 1990.",
          "reference": "The weekly limit for a family of 4 is $1,770.",
          "contexts": [{"text": "Family of 4: weekly income limit $1,770.", "filename": "chart.pdf"}]}


class NliLLM(ConstrainedLLM):
    """Splits the answer into ``STATEMENTS``; judges a statement supported unless it names 1990."""

    name = "nli-script"

    def reply(self, prompt: str, **kwargs: Any) -> str:
        name = kwargs["response_format"]["json_schema"]["name"]
        if name == "StatementGeneratorOutput":
            return json.dumps({"statements": STATEMENTS})
        if name == "ClaimDecompositionOutput":
            return json.dumps({"claims": STATEMENTS})
        # NLIStatementOutput: one verdict per statement of the prompt's input (after the examples)
        asked = json.loads(prompt.rsplit("input: ", 1)[1].split("\nOutput:")[0].strip())["statements"]
        return json.dumps({"statements": [{"statement": s, "reason": "checked", "verdict": int("1990" not in s)}
                                          for s in asked]})


def _nli_inputs(llm: NliLLM) -> list[list[str]]:
    return [json.loads(p.rsplit("input: ", 1)[1].split("\nOutput:")[0].strip())["statements"]
            for p in llm.prompts if '"context"' in p.rsplit("input: ", 1)[1]]


def test_each_statement_is_judged_in_its_own_call_and_scored_by_ragas():
    llm = NliLLM(requests=[])
    scorer = Scorer(Settings(_env_file=None, judge_nli="per_statement"), judge_llm=llm, metrics=["faithfulness"])
    scores, errors = scorer.score(RECORD)
    assert errors == {}
    assert _nli_inputs(llm) == [[s] for s in STATEMENTS]
    assert scores["faithfulness"] == 2 / 3


def test_batch_is_ragas_one_call_with_the_same_score():
    llm = NliLLM(requests=[])
    scorer = Scorer(Settings(_env_file=None, judge_nli="batch"), judge_llm=llm, metrics=["faithfulness"])
    scores, _ = scorer.score(RECORD)
    assert _nli_inputs(llm) == [STATEMENTS]
    assert scores["faithfulness"] == 2 / 3


def test_factual_correctness_verifies_claims_one_per_call():
    llm = NliLLM(requests=[])
    scorer = Scorer(Settings(_env_file=None, judge_nli="per_statement"), judge_llm=llm,
                    metrics=["factual_correctness"])
    scores, errors = scorer.score(RECORD)
    assert errors == {} and scores["factual_correctness"] is not None
    assert _nli_inputs(llm) and all(len(asked) == 1 for asked in _nli_inputs(llm))


def test_per_statement_scores_are_keyed_and_named_apart():
    batch = Scorer(Settings(_env_file=None, judge_nli="batch"), judge_llm=NliLLM(requests=[]), metrics=["faithfulness"])
    per = Scorer(Settings(_env_file=None, judge_nli="per_statement"), judge_llm=NliLLM(requests=[]),
                 metrics=["faithfulness"])
    from rag_lab.evaluate.run.scorer import to_sample

    spec_b, spec_p = batch.specs[0], per.specs[0]
    sample = to_sample(RECORD)
    assert batch.judge_key(spec_b, sample) != per.judge_key(spec_p, sample)
    assert judge_id(Settings(_env_file=None, judge_nli="per_statement")).endswith("+per-statement")
    assert not judge_id(Settings(_env_file=None, judge_nli="batch")).endswith("+per-statement")
