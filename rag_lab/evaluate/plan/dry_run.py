"""`eval --dry-run` and `--max-cost`: what a run will call and cost, from the same questions, resume
state, answer cache and :class:`~rag_lab.evaluate.plan.run_plan.RunPlan` the run would use, without
loading or calling a model. How many samples may be in flight (``--concurrency``) is
:mod:`rag_lab.models.concurrency`'s (the plan carries the resolved number)."""

from __future__ import annotations

from pathlib import Path

from rag_lab.errors import ConfigError
from rag_lab.evaluate.plan.run_plan import RunPlan


def budget_for(plan: RunPlan, mode: str, scorer, answerer, injected_llm: bool):
    """The per-sample cost estimates behind --max-cost; refuses a model without a list price."""
    if injected_llm:
        raise ConfigError("--max-cost needs a configured generator (an injected LLM has no list price)",
                          "drop max_cost or configure the provider through settings")
    cache = answerer.cache
    costs = plan.sample_costs(mode, [s.name for s in scorer.specs if s.judged],
                              lambda q: cache is not None and cache.get(answerer.key(q)) is not None)
    if not costs.priced:
        unpriced = plan.models["llm"] if costs.answer_cost is None else plan.models["judge"]
        raise ConfigError(f"--max-cost: no list price for {unpriced} in rag_lab/models/pricing.py, so the cost "
                          "cannot be estimated", "add its price to rag_lab/models/pricing.py, or drop --max-cost")
    return costs


def plan_run(plan: RunPlan, out: Path, pairs, *, resume: bool, injected_llm: bool, retry_failed: bool = False):
    """The :class:`EvalPlan` of a run: samples left (after --resume), answers already cached, calls,
    tokens, time and cost. Reads the run folder and the cache; writes nothing, calls nothing."""
    from rag_lab.evaluate.metrics import all_specs
    from rag_lab.evaluate.plan.answering import pending
    from rag_lab.evaluate.plan.estimates import CallEstimate, EvalPlan, estimate_seconds, rate_limited_seconds
    from rag_lab.evaluate.store.run_folder import SAMPLES, read_samples
    from rag_lab.models.llm.disk_cache import DiskCache

    settings, metrics = plan.settings, plan.metrics
    judged = [s.name for s in all_specs() if s.judged and (metrics is None or s.name in metrics)]
    cache_path = settings.cache_dir / "llm.sqlite"
    cache = DiskCache(cache_path) if cache_path.exists() else None
    answers = judging = CallEstimate()
    answer_cost: float | None = 0.0
    judge_cost: float | None = 0.0
    samples = cached = 0
    judging_seconds = 0.0  # the local judge by its measured seconds per judged metric (estimates.judge_seconds)
    try:
        for mode in plan.modes:
            path = out / mode / SAMPLES
            done = {r["id"]: r for r in read_samples(path)} if resume and path.exists() else {}
            todo = [p for p, _ in pending(pairs, done, retry_failed)]
            answerer = plan.answerer(mode, lambda: None, cache)
            hits = {p.id for p in todo if cache is not None and cache.get(answerer.key(p.question)) is not None}
            costs = plan.sample_costs(mode, judged, lambda q: False)
            fresh = len(todo) - len(hits)
            samples, cached = samples + len(todo), cached + len(hits)
            answers, judging = answers + costs.answer.times(fresh), judging + costs.judging.times(len(todo))
            judging_seconds += costs.judge_seconds * len(todo)
            answer_cost = None if answer_cost is None or costs.answer_cost is None else answer_cost + costs.answer_cost * fresh
            judge_cost = None if judge_cost is None or costs.judge_cost is None else judge_cost + costs.judge_cost * len(todo)
    finally:
        if cache is not None:
            cache.close()
    # the generator and the judge as the run's manifest names them
    seconds = estimate_seconds(settings.llm_is_local and not injected_llm, answers, judging,
                               plan.concurrency, judging_seconds)
    # RAG_LAB_LLM_RPM: the calls cannot go faster than the limit; the wait is part of the run's time
    limited = rate_limited_seconds(None if injected_llm else settings, plan.judge_cfg, answers, judging)
    return EvalPlan(samples, cached, plan.models["llm"], plan.judge_id if plan.judge_cfg is not None else None,
                    answers, judging, answer_cost, judge_cost, max(seconds, limited), plan.concurrency,
                    rate_limit_seconds=max(0.0, limited - seconds))
