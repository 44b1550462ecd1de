"""A run is resolved once: through a real ``run_evaluation`` on texas_childcare, the model
identity, the index fingerprint, the prompt version and the context window are each resolved once,
into one frozen RunPlan that the answerers, the manifest and the dry run all read."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import Counter

import pytest

from rag_lab.evaluate import run_evaluation
from rag_lab.evaluate.plan import answering, run_plan
from rag_lab.models.llm import factory
from tests.answer.conftest import ScriptedLLM
from tests.evaluate.conftest import quoting_answer


def _spy(monkeypatch, calls: Counter, module, name: str) -> None:
    """Count calls of ``module.name`` wherever it is bound (each module that imported it by name),
    calling through to the real function."""
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls[name] += 1
        return real(*args, **kwargs)

    for loaded in list(sys.modules.values()):
        if getattr(loaded, "__name__", "").startswith("rag_lab") and getattr(loaded, name, None) is real:
            monkeypatch.setattr(loaded, name, counted)


@pytest.fixture
def resolutions(monkeypatch):
    calls: Counter = Counter()
    for module, name in ((answering, "index_fingerprint"), (answering, "prompt_version"),
                         (answering, "context_window_input"), (factory, "resolve_model")):
        _spy(monkeypatch, calls, module, name)
    plans: list[run_plan.RunPlan] = []
    real_resolve = run_plan.resolve_run

    def recording(*args, **kwargs):
        plans.append(real_resolve(*args, **kwargs))
        return plans[-1]

    monkeypatch.setattr("rag_lab.evaluate.run.runner.resolve_run", recording)
    return calls, plans


def test_a_run_resolves_its_identity_once_and_everything_reads_that_plan(lab_settings, texas_index, tmp_path,
                                                                         resolutions):
    calls, plans = resolutions
    out = tmp_path / "run"
    llm = ScriptedLLM(script=quoting_answer, model_name="scripted-plan")
    run_evaluation("texas_childcare", lab_settings, ["bm25", "dense"], out, limit=1, rerank=False, progress=False,
                   llm=llm)

    # once per run, not once per mode, per sample or per stage (two modes over one built index)
    assert calls == Counter(index_fingerprint=1, prompt_version=1, context_window_input=1, resolve_model=1)
    (plan,) = plans
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.prompt_version = "changed"  # type: ignore[misc]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["models"] == plan.models
    assert manifest["config"]["prompt_version"] == plan.prompt_version
    assert manifest["config"]["index_fingerprint"] == plan.index_fingerprint == plan.per_mode["dense"].index
    assert plan.per_mode["bm25"].model_id == plan.per_mode["dense"].model_id  # the injected LLM, by what it is
    assert plan.per_mode["bm25"].index is not None and plan.concurrency == 1

    # the dry run resolves its own plan once too, and it is the run's: it finds every answer the run cached
    calls.clear()
    estimate = run_evaluation("texas_childcare", lab_settings, ["bm25", "dense"], out, limit=1, rerank=False,
                              progress=False, llm=llm, dry_run=True)
    assert calls == Counter(index_fingerprint=1, prompt_version=1, context_window_input=1, resolve_model=1)
    dry = plans[-1]
    assert len(plans) == 2 and dry.per_mode == plan.per_mode and dry.models == plan.models
    assert (estimate.samples, estimate.cached_answers, estimate.answers.calls) == (2, 2, 0)
    assert estimate.generator == manifest["models"]["llm"]


def test_the_plan_is_plain_data_a_ray_actor_can_receive(lab_settings, texas_index):
    import pickle

    from rag_lab.datasets import resolve_dataset

    dataset = resolve_dataset("texas_childcare", lab_settings.datasets_dir)
    plan = run_plan.resolve_run(dataset, lab_settings, ["bm25", "agent"], rerank=False, params={"top_k": 5})
    again = pickle.loads(pickle.dumps(plan))
    assert again.per_mode == plan.per_mode and again.models == plan.models
    # the agent may have a model of its own: resolved for the agent mode, and named in the manifest
    assert plan.models["agent_llm"] == plan.per_mode["agent"].model_id
    assert plan.per_mode["bm25"].inputs["params"] == {"top_k": 5}
    assert plan.per_mode["agent"].index == plan.per_mode["bm25"].index  # one built index, one fingerprint


def test_the_sample_worker_builds_the_plans_models_and_resolves_none_again(lab_settings, texas_index, monkeypatch):
    """The generator is built with the model the plan resolved (the agent's own for the agent), and the
    scorer keys embedding metrics by the plan's embedding id: no name is resolved per worker or sample."""
    from llama_index.core.llms import MockLLM

    from rag_lab import models
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.run.sample_worker import SampleSpec, SampleWorker

    dataset = resolve_dataset("texas_childcare", lab_settings.datasets_dir)
    plan = run_plan.resolve_run(dataset, lab_settings, ["bm25", "agent"], rerank=False, params={})
    calls: Counter = Counter()
    _spy(monkeypatch, calls, factory, "resolve_model")
    _spy(monkeypatch, calls, models, "embed_model_id")
    built: list[dict] = []

    def get_llm(settings, **kwargs):
        built.append(kwargs)
        return MockLLM(max_tokens=8)

    monkeypatch.setattr("rag_lab.models.llm.get_llm", get_llm)
    monkeypatch.setattr("rag_lab.answer.make_answerer", lambda mode, *args, **kwargs: ("answerer", mode, kwargs["llm"]))
    monkeypatch.setattr("rag_lab.answer.agent.RagAgent", lambda **kwargs: kwargs["llm"])
    worker = SampleWorker(SampleSpec(plan))
    try:
        assert worker.answerer("bm25")._build()[:2] == ("answerer", "bm25")
        worker.answerer("agent")._build()
        assert worker.scorer.embedding_id == plan.models["embedding"]
    finally:
        worker.close()
    assert built == [{"model": plan.generator("bm25")}, {"model": plan.generator("agent"), "for_agent": True}]
    assert plan.models["agent_llm"].endswith(plan.generator("agent"))
    assert calls == Counter()  # the plan resolved them; the worker and its scorer only read it
