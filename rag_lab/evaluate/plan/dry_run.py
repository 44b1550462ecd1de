"""`eval --dry-run` and `--max-cost`: what a run will call and cost, from the same questions, resume
state and answer cache the run would use, without loading or calling a model. How many samples may be in
flight (``--concurrency``) is :mod:`rag_lab.models.concurrency`'s (re-exported here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rag_lab.config import Settings
from rag_lab.errors import ConfigError
from rag_lab.models.concurrency import REMOTE_CONCURRENCY, resolve_concurrency  # noqa: F401 - re-exported


def budget_for(settings, mode, rerank, params, judge_cfg, scorer, answerer, models, llm):
    """The per-sample cost estimates behind --max-cost; refuses a model without a list price."""
    from rag_lab.evaluate.plan.estimates import SampleCosts
    from rag_lab.models.llm.factory import resolve_model

    if llm is not None:
        raise ConfigError("--max-cost needs a configured generator (an injected LLM has no list price)",
                          "drop max_cost or configure the provider through settings")
    cache = answerer.cache
    costs = SampleCosts(settings, mode=mode, rerank=rerank, params=params, judge_cfg=judge_cfg,
                        judge_metrics=[s.name for s in scorer.specs if s.judged],
                        answer_cached=lambda q: cache is not None and cache.get(answerer.key(q)) is not None,
                        answer_model=(settings.llm_provider, resolve_model(settings, for_agent=mode == "agent")))
    if not costs.priced:
        unpriced = models["llm"] if costs.answer_cost is None else models["judge"]
        raise ConfigError(f"--max-cost: no list price for {unpriced} in rag_lab/models/pricing.py, so the cost "
                          "cannot be estimated", "add its price to rag_lab/models/pricing.py, or drop --max-cost")
    return costs


def plan_run(dataset, settings: Settings, modes: list[str], out: Path, pairs, *, resume: bool, judge_cfg,
             rerank: bool, metrics, llm, concurrency: int, params: dict, retry_failed: bool = False):
    """The :class:`EvalPlan` of a run: samples left (after --resume), answers already cached, calls,
    tokens, time and cost. Reads the run folder and the cache; writes nothing, calls nothing."""
    from rag_lab.evaluate.plan.answering import manifest_model_name, mode_answerer, pending
    from rag_lab.evaluate.judge import judge_id
    from rag_lab.evaluate.metrics import all_specs
    from rag_lab.evaluate.plan.estimates import CallEstimate, EvalPlan, SampleCosts, estimate_seconds, rate_limited_seconds
    from rag_lab.evaluate.store.run_folder import SAMPLES, read_samples
    from rag_lab.models.llm.disk_cache import DiskCache
    from rag_lab.models.llm.factory import resolve_model

    judged = [s.name for s in all_specs() if s.judged and (metrics is None or s.name in metrics)]
    cache_path = settings.cache_dir / "llm.sqlite"
    cache = DiskCache(cache_path) if cache_path.exists() else None
    answers = judging = CallEstimate()
    answer_cost: float | None = 0.0
    judge_cost: float | None = 0.0
    samples = cached = 0
    judging_seconds = 0.0  # the local judge by its measured seconds per judged metric (plan.judge_seconds)
    try:
        for mode in modes:
            path = out / mode / SAMPLES
            done = {r["id"]: r for r in read_samples(path)} if resume and path.exists() else {}
            todo = [p for p, _ in pending(pairs, done, retry_failed)]
            answerer = mode_answerer(mode, lambda: None, settings, rerank=rerank, params=params,
                                     index=_fingerprint(mode, dataset, settings), cache=cache, llm=llm)
            hits = {p.id for p in todo if cache is not None and cache.get(answerer.key(p.question)) is not None}
            costs = SampleCosts(settings, mode=mode, rerank=rerank, params=params, judge_cfg=judge_cfg,
                                judge_metrics=judged, answer_cached=lambda q: False,
                                answer_model=(settings.llm_provider, resolve_model(settings, for_agent=mode == "agent")))
            fresh = len(todo) - len(hits)
            samples, cached = samples + len(todo), cached + len(hits)
            answers, judging = answers + costs.answer.times(fresh), judging + costs.judging.times(len(todo))
            judging_seconds += costs.judge_seconds * len(todo)
            answer_cost = None if answer_cost is None or costs.answer_cost is None else answer_cost + costs.answer_cost * fresh
            judge_cost = None if judge_cost is None or costs.judge_cost is None else judge_cost + costs.judge_cost * len(todo)
    finally:
        if cache is not None:
            cache.close()
    generator = manifest_model_name(settings, llm=llm)
    judge = judge_id(judge_cfg) if judge_cfg is not None else None  # as the run's manifest names it
    seconds = estimate_seconds(settings.llm_provider == "local" and llm is None, answers, judging, concurrency,
                               judging_seconds)
    # RAG_LAB_LLM_RPM: the calls cannot go faster than the limit; the wait is part of the run's time
    limited = rate_limited_seconds(settings if llm is None else None, judge_cfg, answers, judging)
    return EvalPlan(samples, cached, generator, judge, answers, judging, answer_cost, judge_cost,
                    max(seconds, limited), concurrency, rate_limit_seconds=max(0.0, limited - seconds))


def _fingerprint(mode: str, dataset, settings: Settings) -> str | None:
    """The index fingerprint the answer cache keys use; None when the index is not built yet (then
    no answer can be cached either)."""
    from rag_lab.evaluate.plan.answering import index_fingerprint

    try:
        return index_fingerprint(mode, dataset, settings)
    except Exception:  # noqa: BLE001 - not built (or stale): a dry run must not build it
        return None
