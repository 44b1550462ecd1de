"""The constrained judge on the real local model (the default Qwen2.5-Coder-1.5B GGUF): one short
sample through RAGAS's faithfulness (statement split + verdicts), every call schema-constrained.
(Factual correctness takes the same path with other output models: left to the eval run.)"""

from __future__ import annotations

import math

from rag_lab.config import Settings
from rag_lab.evaluate.judge import ConstrainedJudge, build_judge, judge_id
from rag_lab.evaluate.scoring import Scorer

RECORD = {"id": "q1", "question": "What is the weekly income limit for a family of 4?",
          "answer": "The weekly income limit for a family of 4 is $1,770.",
          "reference": "For a family of 4 the weekly income limit is $1,770.",
          "contexts": [{"text": "Income eligibility, BCY 2026. Family of 4: weekly limit $1,770; annual $92,041.",
                        "filename": "bcy-26-income-eligibility.pdf"}]}


def test_local_judge_scores_a_sample_through_ragas_with_every_call_parsed():
    settings = Settings(_env_file=None, llm_provider="local")  # type: ignore[call-arg]
    assert judge_id(settings).startswith("local:Qwen2.5-Coder-1.5B-Instruct-Q4_K_M+constrained-v")
    llm = build_judge(settings)
    assert llm.context_window >= 16384 and llm.runtime.n_ctx >= 16384  # RAGAS's prompts fit
    scorer = Scorer(settings, judge_llm=llm, metrics=["faithfulness"])
    scores, errors = scorer.score(RECORD)
    assert errors == {}
    assert math.isfinite(scores["faithfulness"]) and scores["faithfulness"] == 1.0  # one claim, in the context
    judges = [scorer._metric(spec).llm for spec in scorer.specs]
    assert all(isinstance(j, ConstrainedJudge) for j in judges)
    assert judges[0].stats.calls >= 2 and judges[0].stats.failures == 0  # statements, then verdicts
    assert judges[0].stats.prompt_tokens > 500  # RAGAS's own prompts (instruction, schema, examples)
