"""Answer and score one sample: the per-sample work of a run, in one place for every process
that does it — the driver (threads, ``--concurrency``) or each Ray actor (``--ray``).

A :class:`SampleWorker` is built from a :class:`SampleSpec` (plain, picklable data) and loads its
models once, as the run's plan names them: the generator on the first uncached answer, the judge at
once when there is one (the one place a run builds its judge). Nothing here resolves a model name.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from rag_lab.datasets import QAPair
from rag_lab.evaluate.plan.answering import CachedAnswerer
from rag_lab.evaluate.plan.cost import priced_cost
from rag_lab.evaluate.plan.run_plan import RunPlan
from rag_lab.evaluate.run.scorer import Scorer, citation_summary, timed_score
from rag_lab.retrieve.registry import is_agent
from rag_lab.models.llm.disk_cache import DiskCache
from rag_lab.models.pricing import Price


class _Answerers:
    """One LLM for every engine mode (loaded once), the agent's own, built lazily: the models the plan resolved."""

    def __init__(self, plan: RunPlan, llm: Any = None, agent_llm: Any = None) -> None:
        self.plan, self.settings, self.dataset = plan, plan.settings, plan.dataset
        self.rerank, self.params = plan.rerank, plan.params
        self._llm, self._agent_llm = llm, agent_llm

    def build(self, mode: str):
        from rag_lab.answer import make_answerer
        from rag_lab.models.llm import get_llm

        if is_agent(mode):
            from rag_lab.answer.adapter import AgentAnswerer
            from rag_lab.answer.agent import RagAgent

            if self._agent_llm is None:
                self._agent_llm = get_llm(self.settings, model=self.plan.generator(mode), for_agent=True)
            agent = RagAgent(settings=self.settings, dataset=self.dataset, llm=self._agent_llm, **self.params)

            def fresh(question: str):  # every Q&A sample is a new conversation
                agent.reset()
                return agent.chat(question)
            return AgentAnswerer(fresh)
        if self._llm is None:
            self._llm = get_llm(self.settings, model=self.plan.generator(mode))
        return make_answerer(mode, self.settings, self.dataset, rerank=self.rerank, llm=self._llm, **self.params)


def evaluate_sample(pair: QAPair, relevant: dict[str, int], mode: str, answerer: CachedAnswerer,
                    scorer: Scorer, price: Price | None) -> dict[str, Any]:
    """One run record: the answer (or its error), its citations, its cost at ``price`` (the plan's
    list price of the mode's generator) and its scores."""
    record: dict[str, Any] = {
        "id": pair.id, "mode": mode, "question": pair.question, "reference": pair.reference_answer,
        "source_files": list(pair.source_files), "relevant": relevant, "error": None, "cached": False,
    }
    if pair.unjudgeable:  # its source_file names no document: no document-level metrics
        record.update(unjudgeable=True, unknown_sources=list(pair.unknown_sources))
    try:
        fields, cached = answerer.answer(pair.question)
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        record.update(answer=None, contexts=[], latency={}, usage={}, scores={}, score_errors={},
                      error=f"{type(exc).__name__}: {exc}"[:1000])
        return record
    record.update(fields, cached=cached)
    usage = record.get("usage") or {}
    record["cost_usd"] = priced_cost(price, int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))
    record["citations"] = citation_summary(record)
    scores, errors, seconds = timed_score(scorer, record)
    record["scores"], record["score_errors"] = scores, errors
    record["latency"]["score"] = seconds
    return record


@dataclass(frozen=True)
class SampleSpec:
    """What answering and scoring a run's samples depends on (picklable: Ray ships it to actors):
    the run's resolved :class:`RunPlan` (models, index fingerprints, answer keys, judge) and the ids
    of the dataset's declared dev split (their records are marked)."""

    plan: RunPlan
    dev_ids: frozenset[str] = field(default_factory=frozenset)


class SampleWorker:
    """``worker(mode, (pair, relevant)) -> record``; thread-safe (samples in flight share it).
    ``llm`` / ``agent_llm`` / ``judge_llm`` inject models (tests); otherwise they are the plan's.
    ``build_judge``: build the plan's judge here (False: a worker that only prices samples needs none)."""

    def __init__(self, spec: SampleSpec, *, llm: Any = None, agent_llm: Any = None, judge_llm: Any = None,
                 build_judge: bool = True) -> None:
        if spec.plan.judge_cfg is not None and judge_llm is None and build_judge:
            from rag_lab.evaluate.judge import build_judge as make_judge

            judge_llm = make_judge(spec.plan.judge_cfg)
        self.spec, self.llm, self.agent_llm = spec, llm, agent_llm
        plan = spec.plan
        self.cache = DiskCache(plan.settings.cache_dir / "llm.sqlite")
        self.scorer = Scorer(plan.settings, judge_llm=judge_llm, cache=self.cache, metrics=plan.metrics,
                             embedding_id=plan.models["embedding"])
        self._factory = _Answerers(plan, llm=llm, agent_llm=agent_llm)
        self._answerers: dict[str, CachedAnswerer] = {}
        self._lock = threading.Lock()

    def answerer(self, mode: str) -> CachedAnswerer:
        """The mode's cached answerer, one per worker (its generator is built on the first miss)."""
        with self._lock:
            if mode not in self._answerers:
                self._answerers[mode] = self.spec.plan.answerer(mode, lambda: self._factory.build(mode), self.cache)
            return self._answerers[mode]

    def __call__(self, mode: str, item: tuple[QAPair, dict[str, int]]) -> dict[str, Any]:
        pair, relevant = item
        # marked: a question of the declared dev split may have tuned what it scores (rag_lab.splits)
        price = self.spec.plan.per_mode[mode].price
        return (evaluate_sample(pair, relevant, mode, self.answerer(mode), self.scorer, price)
                | {"dev_split": pair.id in self.spec.dev_ids})

    def close(self) -> None:
        self.cache.close()


# Where a run's samples are answered and scored, plugged in by the caller: ``executor(spec,
# concurrency)`` is a context manager yielding ``(run_sample(mode, item) -> record, samples in
# flight)``. The default is this process's SampleWorker on threads; rag_lab.distributed.samples
# provides one on Ray actors (evaluation never imports it: distributed sits above evaluate).
SampleExecutor = Callable[[SampleSpec, int], AbstractContextManager[tuple[Callable[[str, Any], dict[str, Any]], int]]]
