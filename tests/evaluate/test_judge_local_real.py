"""The constrained judge on the real local model (the default Qwen2.5-Coder-1.5B GGUF): one short
sample through RAGAS's faithfulness (statement split + verdicts), every call schema-constrained.
(Factual correctness takes the same path with other output models: left to the eval run.)"""

from __future__ import annotations

import pytest

from rag_lab.config import Settings
from rag_lab.evaluate.judge import ConstrainedJudge, build_judge, judge_id
from rag_lab.evaluate.run.scorer import Scorer

pytestmark = pytest.mark.slow  # the real local model (`make test-fast` leaves it out)

RECORD = {"id": "q1", "question": "What is the weekly income limit for a family of 4?",
          "answer": "The weekly income limit for a family of 4 is $1,770.",
          "reference": "For a family of 4 the weekly income limit is $1,770.",
          "contexts": [{"text": "Income eligibility, BCY 2026. Family of 4: weekly limit $1,770; annual $92,041.",
                        "filename": "bcy-26-income-eligibility.pdf"}]}


def right_and_changed(scorer: Scorer, record: dict) -> list[list[dict]]:
    """Faithfulness of ``record`` with the right number (must be 1.0) and a changed one (must be 0.0):
    the judge's transcript of each."""
    judge = scorer.judge_of("faithfulness")
    scores, transcripts = {}, []
    for label, answer in (("supported", RECORD["answer"]),
                          ("changed", "The weekly income limit for a family of 4 is $1,950.")):
        judge.transcript = []
        found, errors = scorer.score(record | {"answer": answer})
        assert errors == {}
        scores[label] = found["faithfulness"]
        transcripts.append(judge.transcript)
    assert scores == {"supported": 1.0, "changed": 0.0}
    return transcripts


def test_the_real_grammar_bounds_a_list_the_model_would_run_on(monkeypatch):
    """``maxItems`` reaches llama.cpp's grammar: asked for 30 statements, the 1.5B writes the bound."""
    from ragas.metrics._faithfulness import StatementGeneratorOutput

    from rag_lab.evaluate.judge import constrained

    monkeypatch.setattr(constrained, "MAX_LIST_ITEMS", 3)
    judge = ConstrainedJudge(build_judge(Settings(_env_file=None, llm_provider="local")), max_tokens=256)
    reply = judge.generate("Write the statements 'Number 1.', 'Number 2.' and so on up to 'Number 30.' as JSON: "
                           '{"statements": [...]}', StatementGeneratorOutput)
    # (the third item may carry the model's urge to go on, e.g. "Number 3., ": the list cannot)
    assert len(reply.statements) == 3 and reply.statements[:2] == ["Number 1.", "Number 2."]
    assert judge.stats.failures == 0


def test_grounded_judge_scores_through_ragas_quotes_the_context_and_catches_a_changed_number():
    """``RAG_LAB_JUDGE_NLI=grounded`` on the real model, through RAGAS's own statement prompt: every
    call schema-constrained and parsed, the quote is the context's passage, the right number is
    supported and a changed one is not (a judge that calls everything unsupported fails the first half).
    (The default local judge asks probability verdicts: test_judge_probability.py.)"""
    settings = Settings(_env_file=None, llm_provider="local", judge_nli="grounded")  # type: ignore[call-arg]
    assert judge_id(settings).startswith("local:Qwen2.5-Coder-1.5B-Instruct-Q4_K_M+constrained-v")
    llm = build_judge(settings)
    assert llm.context_window >= 16384 and llm.runtime.n_ctx >= 16384  # RAGAS's prompts fit
    scorer = Scorer(settings, judge_llm=llm, metrics=["faithfulness"])
    row = "Income eligibility BCY 2026 | Family of 4 | Weekly limit: $1,770 | Annual limit: $92,041"
    record = RECORD | {"contexts": [{"text": row, "filename": "bcy-26-income-eligibility.pdf"}]}
    for transcript in right_and_changed(scorer, record):
        quoted = [v["evidence"] for t in transcript if t["output"] == "GroundedNLIOutput" for v in t["reply"]["statements"]]
        assert quoted and set(quoted) <= {row, "none"}  # the grammar allows nothing else
    judges = [scorer._metric(spec).llm for spec in scorer.specs]
    assert all(isinstance(j, ConstrainedJudge) for j in judges)
    assert judges[0].stats.calls >= 4 and judges[0].stats.failures == 0  # statements, then verdicts, twice
    assert judges[0].stats.prompt_tokens > 1000  # RAGAS's own prompts (instruction, schema, examples)


def test_statements_by_sentence_on_the_real_grammar_split_every_sentence():
    """``RAG_LAB_JUDGE_STATEMENTS=by_sentence`` on the real model: the grammar (a tuple of constant
    sentences, llguidance's prefixItems) makes the splitter give the added sentence its own statements,
    which the judge then finds unsupported (RAGAS's prompt can drop such a sentence: nothing to catch)."""
    settings = Settings(_env_file=None, llm_provider="local", judge_statements="by_sentence")  # type: ignore[call-arg]
    scorer = Scorer(settings, judge_llm=build_judge(settings), metrics=["faithfulness"])
    judge = scorer.judge_of("faithfulness")
    judge.transcript = []
    added = "This rule was first adopted by the Texas Legislature in 1987."
    found, errors = scorer.score(RECORD | {"answer": f"{RECORD['answer']} {added}"})
    assert errors == {}
    split = next(t["reply"]["sentences"] for t in judge.transcript if t["output"] == "StatementsBySentence")
    assert [s["sentence"] for s in split] == [RECORD["answer"], added]
    assert all(s["statements"] for s in split) and any("1987" in s for s in split[1]["statements"])
    assert found["faithfulness"] < 1.0


def test_a_smaller_splitter_on_the_real_models_splits_and_the_judge_verifies():
    """``RAG_LAB_JUDGE_SPLITTER=qwen-0.5b``: the 0.5B model splits the answer into statements (its
    reply parses under the grammar), the 1.5B judge gives the verdicts; the right number is supported
    and a changed one is not."""
    settings = Settings(_env_file=None, llm_provider="local", judge_nli="grounded", judge_splitter="qwen-0.5b")  # type: ignore[call-arg]
    scorer = Scorer(settings, judge_llm=build_judge(settings), metrics=["faithfulness"])
    judge = scorer.judge_of("faithfulness")
    splitter = scorer._metric(scorer.specs[0]).statement_generator_prompt.splitter
    assert isinstance(splitter, ConstrainedJudge) and "0.5B" in splitter.llm.metadata.model_name
    for transcript in right_and_changed(scorer, RECORD):
        assert [t["output"] for t in transcript][0] == "StatementGeneratorOutput"  # the split, kept
    assert splitter.stats.calls == 2 and splitter.stats.failures == 0  # one split per answer
    assert judge.stats.calls == 2  # verdicts only


def test_true_restatements_the_model_must_read_score_at_least_half():
    """The default local judge (probability verdicts) through ``Scorer.score``, on the restatements no
    rule decides: a terse right answer ("$3,972 [Doc 1]": factual correctness reads it as the answer
    to the question) and "per month" for a "Monthly" column. (The rule-level restatements, with a
    model double: test_judge_restatements.py.) Measured 2026-11-28: terse 0.56 / 0.59, per month
    0.60 / 0.77 (faithfulness / factual correctness)."""
    settings = Settings(_env_file=None, llm_provider="local")  # type: ignore[call-arg]
    scorer = Scorer(settings, judge_llm=build_judge(settings), metrics=["faithfulness", "factual_correctness"])
    table = ("Income eligibility limits, BCY 2026 (85% of state median income)\n"
             "Family Size | Bi-weekly | Monthly | Annual\n4 | $3,410 | $7,389 | $88,668\n5 | $3,972 | $8,606 | $103,272\n")
    cases = [("What is the bi-weekly income limit for a family of 5 in BCY 2026?", "$3,972 [Doc 1]",
              "In BCY 2026 a family of 5 may earn up to $3,972 bi-weekly."),
             ("What is the monthly income limit for a family of 4?", "A family of 4 may earn up to $7,389 per month.",
              "A family of 4 may earn up to $7,389 monthly.")]
    for question, answer, reference in cases:
        scores, errors = scorer.score({"id": "q", "question": question, "answer": answer, "reference": reference,
                                       "contexts": [{"text": table}]})
        assert errors == {}
        assert scores["faithfulness"] >= 0.5 and scores["factual_correctness"] >= 0.5, (answer, scores)
