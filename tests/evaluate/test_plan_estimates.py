"""The dry run's estimate counts the calls the engine makes: bm25 is reranked like every mode but
kendra (NO_RERANK_MODES), and a run that sets no top_k reranks the engine's DEFAULT_TOP_K candidates."""

from __future__ import annotations

from rag_lab.answer.engine import DEFAULT_TOP_K
from rag_lab.answer.rerank import DEFAULT_TOP_N
from rag_lab.evaluate import run_evaluation
from rag_lab.evaluate.plan import SampleCosts, answer_calls
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
