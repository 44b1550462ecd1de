"""The dry run's estimate counts the calls the engine makes: bm25 is reranked like every mode but
a service (kendra ranks itself: ``registry.ranks_itself``), and a run that sets no top_k reranks the engine's DEFAULT_TOP_K candidates."""

from __future__ import annotations

import pytest

from rag_lab.answer.engine import DEFAULT_TOP_K
from rag_lab.answer.rerank import DEFAULT_TOP_N
from rag_lab.evaluate import run_evaluation
from rag_lab.evaluate.plan.estimates import SampleCosts, answer_calls
from tests.evaluate.test_judged_metrics import judge_or_quote
from tests.models.fake_openai_server import run_within


def test_a_reranked_bm25_sample_is_estimated_with_the_rerank_the_engine_runs(fake_openai, lab_settings, texas_index,
                                                                             tmp_path):
    fake = fake_openai(reply=judge_or_quote)
    settings = lab_settings.model_copy(update={"llm_provider": "openai_compatible", "llm_base_url": fake.url,
                                               "llm_model": "fake-gen"})
    kw = dict(limit=1, progress=False, metrics=["rouge_l"])

    def planned(rerank: bool) -> int:
        plan, _ = run_within(120, run_evaluation, "texas_childcare", settings, ["bm25"], tmp_path / "plan",
                             dry_run=True, rerank=rerank, **kw)
        return plan.answers.calls

    assert planned(rerank=True) == planned(rerank=False) + 1  # before: equal (bm25 estimated without a rerank)
    run_within(300, run_evaluation, "texas_childcare", settings, ["bm25"], tmp_path / "run", rerank=True, **kw)
    reranks = [r for r in fake.requests if r.prompt.startswith("A list of documents is shown below")]
    assert reranks and len(fake.requests) == len(reranks) + 1  # the engine reranks bm25, then answers
    # (the estimate counts one rerank call; the choice-select reranker asks once per 10 candidates)


def test_kendra_is_estimated_without_a_rerank_call():
    kw = dict(rerank=True, top_n=7, top_k=30, chunk_words=200, context_lines=None)
    assert answer_calls("kendra", **kw).calls == 1 and answer_calls("bm25", **kw).calls == 2


def test_a_run_without_top_k_is_estimated_at_the_engines_defaults(lab_settings):
    def costs(params):
        return SampleCosts(lab_settings, mode="dense", rerank=True, params=params, judge_cfg=None, judge_metrics=[],
                           answer_cached=lambda q: False, answer_model=("local", "any")).answer

    assert costs({}) == costs({"top_k": DEFAULT_TOP_K, "top_n": DEFAULT_TOP_N})  # before: top_k 20, not 30


# --- the dry run times the local judge by its measured speed, not the remote rate ---
JUDGED = ["faithfulness", "response_relevancy", "llm_context_precision_with_reference", "llm_context_recall",
          "factual_correctness"]


def _judge_costs(lab_settings, judge: str) -> SampleCosts:
    from rag_lab.evaluate.run.runner import judge_settings

    return SampleCosts(lab_settings, mode="bm25", rerank=False, params={}, judge_cfg=judge_settings(lab_settings, judge),
                       judge_metrics=JUDGED, answer_cached=lambda q: False, answer_model=("local", "any"))


def test_a_local_judge_is_timed_per_judged_metric_at_its_measured_speed(lab_settings):
    from rag_lab.evaluate.plan.estimates import LOCAL_JUDGE_SECONDS_OTHER, REMOTE_SECONDS_PER_CALL, estimate_seconds

    local, remote = _judge_costs(lab_settings, "local"), _judge_costs(lab_settings, "openai:gpt-4o-mini")
    assert local.judging == remote.judging  # the same calls and tokens …
    assert remote.judge_seconds == remote.judging.calls * REMOTE_SECONDS_PER_CALL
    # … but the local judge's seconds are the benchmark's: 89 s faithfulness, 103 s factual correctness
    assert local.judge_seconds == 89 + 103 + 3 * LOCAL_JUDGE_SECONDS_OTHER
    per_metric = local.judge_seconds / len(JUDGED)
    assert 89 <= per_metric <= 147  # the measured range per judged metric and sample (README, judge validation)
    seconds = estimate_seconds(True, local.answer.times(2), local.judging.times(2), 1, local.judge_seconds * 2)
    assert seconds >= 2 * len(JUDGED) * 89  # before: 2.7 min for what took 25.5 min (docs/evaluation.md)
    assert estimate_seconds(True, local.answer, local.judging, 1) < seconds / 5  # the old remote-rate figure


def test_the_dry_run_prices_a_local_judge_from_its_measured_speed(lab_settings, texas_index, tmp_path):
    from rag_lab.evaluate.plan.estimates import LOCAL_SECONDS_PER_ANSWER

    plan = run_evaluation("texas_childcare", lab_settings, ["bm25"], tmp_path / "dry", limit=2, rerank=False,
                          judge="local", dry_run=True, progress=False)
    judged = 2 * (89 + 103 + 3 * 141)  # two samples, five judged metrics each
    # answers another test of the session cached cost no time: count the ones the plan will generate
    assert plan.seconds == pytest.approx(plan.answers.calls * LOCAL_SECONDS_PER_ANSWER + judged)
    assert not (tmp_path / "dry").exists()
