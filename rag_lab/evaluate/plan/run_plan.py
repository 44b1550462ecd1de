"""A run resolved once: who answers and judges, which index, which prompts, what the calls cost.

:func:`resolve_run` reads the settings (and the injected models) once, at the start of
``run_evaluation`` and of its dry run, into a frozen :class:`RunPlan`. The runner, the sample
workers (here or on Ray actors: the plan is plain, picklable data), the dry run, the manifest and
the cost meter (``--max-cost``) all read it; none of them resolves a model name, an index
fingerprint or a price table entry again. So the manifest names exactly the models and index the
answers were keyed by, and the dry run counts exactly the answers the run will find cached.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.plan.answering import (CachedAnswerer, answer_inputs, context_window_input,
                                             index_fingerprint, model_id, prompt_version)
from rag_lab.evaluate.plan.cost import price_of
from rag_lab.evaluate.plan.estimates import SampleCosts
from rag_lab.models.llm.disk_cache import DiskCache
from rag_lab.models.pricing import Price
from rag_lab.retrieve.registry import is_agent, needs_dataset


@dataclass(frozen=True)
class ModePlan:
    """One mode's resolved answer identity: the key its cached answers have and the model it is priced as."""

    model_id: str  # the generator's name in the answer cache key (an injected LLM: what it is)
    inputs: dict[str, Any]  # every other input of the key (rerank, params, sampling, index fingerprint …)
    index: str | None  # the index fingerprint (None: not built yet — a dry run only)
    priced_model: tuple[str, str]  # (provider, model) whose list price estimates an answer
    price: Price | None = None  # the list price a recorded answer costs (None: unpriced, its cost NaN)


@dataclass(frozen=True)
class RunPlan:
    """Everything a run depends on, resolved once (see the module docstring)."""

    settings: Settings
    dataset: Dataset
    modes: tuple[str, ...]
    rerank: bool
    params: dict[str, Any]
    metrics: list[str] | None
    judge_cfg: Settings | None  # the judge's settings (None: no judged metrics unless a judge LLM is injected)
    judge_id: str | None  # the judge's name in the manifest (configured or injected)
    concurrency: int  # samples in flight
    prompt_version: str
    models: dict[str, str | None]  # the manifest's names: llm, agent_llm, embedding, judge
    per_mode: dict[str, ModePlan]

    @property
    def fingerprints(self) -> dict[str, str | None]:
        return {mode: plan.index for mode, plan in self.per_mode.items()}

    @property
    def index_fingerprint(self) -> str | None:
        """The built index's fingerprint (a service's remote index does not count)."""
        return next((p.index for m, p in self.per_mode.items() if needs_dataset(m)), None)

    def generator(self, mode: str) -> str:
        """The model the mode's generator is built with (resolved once: the agent may have its own)."""
        return self.per_mode[mode].priced_model[1]

    def answerer(self, mode: str, build: Callable[[], Any], cache: DiskCache | None) -> CachedAnswerer:
        """The mode's cached answerer (its generator built by ``build`` on the first miss)."""
        identity = self.per_mode[mode]
        return CachedAnswerer(mode, build, model_id=identity.model_id, inputs=identity.inputs, cache=cache,
                              version=self.prompt_version)

    def sample_costs(self, mode: str, judge_metrics: list[str], answer_cached: Callable[[str], bool]) -> SampleCosts:
        """One sample's estimated calls and cost in ``mode`` (``--max-cost`` and ``--dry-run``)."""
        return SampleCosts(self.settings, mode=mode, rerank=self.rerank, params=self.params, judge_cfg=self.judge_cfg,
                           judge_metrics=judge_metrics, answer_cached=answer_cached,
                           answer_model=self.per_mode[mode].priced_model)


def resolve_run(dataset: Dataset, settings: Settings, modes: Sequence[str], *, rerank: bool, params: dict[str, Any],
                metrics: list[str] | None = None, judge_cfg: Settings | None = None, judge_llm: Any = None,
                llm: Any = None, agent_llm: Any = None, concurrency: int | None = None,
                require_index: bool = True) -> RunPlan:
    """The run's :class:`RunPlan`. ``require_index``: the index must be built (a run builds it first);
    a dry run builds nothing, so an index not built yet has no fingerprint (and no cached answer)."""
    from rag_lab.models import embed_model_id
    from rag_lab.models.concurrency import resolve_concurrency
    from rag_lab.models.llm.factory import resolve_model
    from rag_lab.models.llm.identity import configured_name

    judge_id = None
    if judge_cfg is not None:
        from rag_lab.evaluate.judge import judge_id as judge_identity

        judge_id = judge_identity(judge_cfg)
    elif judge_llm is not None:  # an injected judge: named by what it is (not "no judge")
        from rag_lab.models.llm.identity import llm_identity

        judge_id = llm_identity(judge_llm)
    # the configured generator(s), resolved once: the agent may have a model of its own
    resolved = {False: resolve_model(settings, for_agent=False)}
    if any(is_agent(m) for m in modes):
        resolved[True] = resolve_model(settings, for_agent=True)
    window = context_window_input(settings)
    # one fingerprint for every mode over the index this lab builds (Kendra's remote index has its own)
    indexes: dict[str, str | None] = {}
    for mode in modes:
        if _index_of(mode) not in indexes:
            indexes[_index_of(mode)] = _fingerprint(mode, dataset, settings, required=require_index,
                                                    contextual=params.get("contextual"))
    per_mode = {}
    for mode in modes:
        agent = is_agent(mode)
        injected = agent_llm if agent else llm
        name = model_id(settings, llm=injected) if injected is not None else configured_name(settings, resolved[agent])
        index = indexes[_index_of(mode)]
        per_mode[mode] = ModePlan(name, answer_inputs(settings, rerank=rerank, params=params, index=index, window=window),
                                  index, (settings.llm_provider, resolved[agent]), price_of(name))

    def manifest_name(injected: Any, agent: bool) -> str:  # an injected LLM keeps its short object name
        if injected is not None:
            return f"object:{type(injected).__name__}:{injected.metadata.model_name}"
        return configured_name(settings, resolved[agent])

    models = {"llm": manifest_name(llm, False),
              "agent_llm": manifest_name(agent_llm, True) if any(is_agent(m) for m in modes) else None,
              "embedding": embed_model_id(settings), "judge": judge_id}
    return RunPlan(settings, dataset, tuple(modes), rerank, dict(params), metrics, judge_cfg, judge_id,
                   resolve_concurrency(concurrency, settings, judge_cfg, llm), prompt_version(), models, per_mode)


def _index_of(mode: str) -> str:
    return "built" if needs_dataset(mode) else mode  # a service's remote index is its own


def _fingerprint(mode: str, dataset: Dataset, settings: Settings, *, required: bool,
                 contextual: str | None = None) -> str | None:
    if required:
        return index_fingerprint(mode, dataset, settings, contextual)
    try:
        return index_fingerprint(mode, dataset, settings, contextual)
    except Exception:  # noqa: BLE001 - not built (or stale): a dry run must not build it
        return None
