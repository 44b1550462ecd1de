"""Run retrieval modes over a dataset's questions, score every answer, keep every result.

    from rag_lab.evaluate import run_evaluation, load_run
    run = run_evaluation("texas_childcare", modes=["bm25", "hybrid"], out="runs/try", limit=10)
    run.summary        # per mode × metric: mean, n, nan
    run.samples        # per sample × metric (tidy)

Layout: ``<out>/manifest.json`` and ``<out>/<mode>/samples.jsonl`` (one line per finished
sample, appended and fsynced at once). ``resume=True`` skips finished samples of an identical
configuration (adding modes or questions is fine; anything else that shapes an answer or a score
is refused, naming what differs); a failing sample is recorded with its error and the run goes on.
A folder holding another run (another dataset or configuration, or other modes or questions
without ``resume``) is refused, naming both; ``force=True`` moves that run aside first
(:mod:`rag_lab.evaluate.store.claim`).
One process writes a run folder at a time (:func:`run_lock`). Answers and judged scores are cached on disk
(``<data_dir>/cache/llm.sqlite``), so re-running an unchanged sample costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rag_lab.config import LLM_PROVIDERS, Settings, get_settings
from rag_lab.datasets import Dataset, QAPair, resolve_dataset
from rag_lab.errors import ConfigError
from rag_lab.retrieve.registry import INDEX_MODES, answering_modes, needs_dataset
from rag_lab.evaluate.plan.answering import pending
from rag_lab.evaluate.plan.dry_run import budget_for
from rag_lab.evaluate.plan.run_plan import RunPlan, resolve_run
from rag_lab.evaluate.store.claim import RunOwner, claim_run_folder, eval_summary, folder_note, owner_of
from rag_lab.evaluate.store.manifest import build_manifest, dataset_hash
from rag_lab.evaluate.store.run_lock import run_lock
from rag_lab.evaluate.run.sample_worker import SampleExecutor, SampleSpec, SampleWorker, evaluate_sample  # noqa: F401 - re-exported
from rag_lab.schedule import RunGuard, run_in_flight
from rag_lab.splits import spread_by_source
from rag_lab.evaluate.store.run_folder import MANIFEST, SampleLog, write_json_atomic
from rag_lab.progress import progress_bar

DEFAULT_MODES = INDEX_MODES


def eval_modes() -> tuple[str, ...]:
    """Every retrieval mode (:mod:`rag_lab.retrieve.registry`) and the agent."""
    return answering_modes()


def questions(dataset: Dataset, limit: int | None = None, split: str = "all") -> list[tuple[QAPair, dict[str, int]]]:
    """The dataset's questions with their relevant documents (``{doc: grade}``; empty if unknown).

    Q&A files first (reference answers, source files); otherwise BEIR queries with their qrels.
    ``split``: all, the declared dev split or the rest (:func:`rag_lab.splits.select_split`), chosen
    before ``limit`` samples them."""
    if dataset.has_qa:
        pairs = [(p, dict.fromkeys(p.source_files, 1)) for p in dataset.load_qa()]
    elif dataset.has_beir_queries:
        qrels = dataset.load_qrels()
        pairs = [(QAPair(qid, text, None, tuple(qrels.get(qid, {}))), dict(qrels.get(qid, {})))
                 for qid, text in dataset.load_queries().items() if qid in qrels]
    else:
        raise ConfigError(f"Dataset {dataset.name!r} has no questions",
                          "add a qa.jsonl next to the documents (see README: 'Your own corpus')")
    if split != "all":
        from rag_lab.splits import select_split

        chosen = set(select_split([p.id for p, _ in pairs], dataset.dev_split, split, dataset.name))
        pairs = [(p, relevant) for p, relevant in pairs if p.id in chosen]
    if limit is not None:  # a sample spread over the source documents, not the file's first lines
        by_id = {p.id: (p, relevant) for p, relevant in pairs}
        pairs = [by_id[i] for i in spread_by_source(list(by_id), {p.id: sorted(r) for p, r in pairs}, limit)]
    return pairs


def parse_judge(spec: str) -> tuple[str, str | None]:
    """``"openai"`` / ``"openai:gpt-5-mini"`` / ``"bedrock:amazon.nova-pro-v1:0"`` → (provider, model)."""
    provider, _, model = spec.partition(":")
    if provider not in LLM_PROVIDERS:
        raise ConfigError(f"Unknown judge provider {provider!r} in --judge {spec!r}",
                          f"use PROVIDER[:MODEL] with PROVIDER one of {', '.join(LLM_PROVIDERS)}")
    return provider, model or None


def judge_settings(settings: Settings, spec: str) -> Settings:
    provider, model = parse_judge(spec)
    update: dict[str, Any] = {"llm_provider": provider, "llm_model": model}
    if provider == "openai_compatible" and settings.judge_base_url:  # the judge's own server
        update["llm_base_url"] = settings.judge_base_url
    return settings.model_copy(update=update)


def run_evaluation(
    dataset: Dataset | str,
    settings: Settings | None = None,
    modes: Sequence[str] = DEFAULT_MODES,
    out: str | Path = "runs/eval",
    *,
    limit: int | None = None,
    split: str = "all",
    resume: bool = False,
    judge: str | None = None,
    judge_llm: Any = None,
    rerank: bool | None = None,
    conversations: bool = False,
    progress: bool = True,
    llm: Any = None,
    agent_llm: Any = None,
    metrics: list[str] | None = None,
    concurrency: int | None = None,
    max_cost: float | None = None,
    dry_run: bool = False,
    executor: SampleExecutor | None = None,
    retry_failed: bool = False,
    force: bool = False,
    **params: Any,
):
    """Evaluate ``modes`` on ``dataset``; returns :func:`load_run` of ``out``.

    ``judge`` (``PROVIDER[:MODEL]``) turns on the LLM-judged metrics (``judge_llm`` injects the
    judge's LLM, e.g. one with a test transport); ``llm`` / ``agent_llm`` inject the generator.
    ``split`` (all | dev | rest) picks the dataset's declared dev split, the other questions, or all.
    ``params`` go to the answerers (top_k, top_n, fusion_k, prefetch, weights, contextual …).
    ``concurrency`` samples are in flight at once (default: 1 for the local model, 8 for remote
    providers); ``max_cost`` (USD) stops the run before the estimate would pass it; ``dry_run``
    returns the :class:`EvalPlan` (calls, tokens, time, cost) without calling any model.
    ``executor`` answers and scores the samples elsewhere (a :data:`SampleExecutor`, e.g.
    ``rag_lab.distributed.samples.ray_sample_executor(cluster)``: Ray actors, each loading its
    models once); this process still writes every result, so resume and the tables are
    as without it. It plugs in from above: evaluation knows no Ray.
    ``metrics`` (names; default all) chooses the judged and non-judged metrics; a resumed run keeps its own.
    ``resume`` runs again every sample whose answer or judged metric failed for a reason that may pass
    (server error, timeout, deadline, rate limit, connection), keeping what succeeded; ``retry_failed``
    also runs again those that will not change on their own (a refused key, an unparsable judgement).
    ``out`` holding another run is refused (naming both runs); ``force`` moves that run into a
    timestamped sibling folder first (deleting nothing).
    """
    settings = settings or get_settings()
    if rerank is None:  # the CLI's default: off for the local model, on for remote providers
        from rag_lab.answer.engine import default_rerank

        rerank = default_rerank(settings)
    if isinstance(dataset, (str, Path)):
        dataset = resolve_dataset(dataset, settings.datasets_dir)
    modes = list(dict.fromkeys(modes))  # a mode named twice is run once
    unknown = [m for m in modes if m not in eval_modes()]
    if unknown or not modes:
        raise ConfigError(f"Unknown or missing mode(s): {', '.join(unknown) or '(none)'}",
                          f"choose from {', '.join(eval_modes())}")
    if resume and force:
        raise ConfigError("--resume continues the run in the folder, --force moves it aside: not both",
                          "drop --force to continue the run, or --resume to start a new one there")
    if retry_failed and not resume:
        raise ConfigError("--retry-failed (retry_failed=True) continues a run", "use it with --resume (resume=True)")
    if max_cost is not None and not (isinstance(max_cost, (int, float)) and max_cost >= 0):
        raise ConfigError(f"--max-cost (max_cost) must be a number ≥ 0 (USD), got {max_cost!r}",
                          "give a budget in dollars, or leave it out")
    out = Path(out)
    pairs = questions(dataset, limit, split)
    metrics = chosen_metrics(metrics, out, resume)
    judge_cfg = judge_settings(settings, judge) if judge else None
    resolved = dict(rerank=rerank, params=params, metrics=metrics, judge_cfg=judge_cfg, judge_llm=judge_llm, llm=llm,
                    agent_llm=agent_llm, concurrency=concurrency)
    if dry_run:  # resolved once, without building anything (an index not built yet has no cached answer)
        from rag_lab.evaluate.plan.dry_run import plan_run

        from dataclasses import replace

        plan = resolve_run(dataset, settings, modes, require_index=False, **resolved)
        estimate = plan_run(plan, out, pairs, resume=resume, injected_llm=llm is not None, retry_failed=retry_failed)
        manifest = run_manifest(plan, pairs, limit=limit, split=split, conversations=conversations)
        if plan.index_fingerprint is None:  # not built yet: nothing to compare the old run's index with
            manifest["config"].pop("index_fingerprint")
        note = folder_note(out, owner_of(manifest), _differences(out, manifest, resume), force=force, resume=resume)
        return replace(estimate, folder_note=note, folder_refused=note is not None and not force)
    if executor is not None and any(x is not None for x in (llm, agent_llm, judge_llm)):
        raise ConfigError("--ray builds the generator and the judge on each Ray actor from the settings; "
                          "LLM objects passed in cannot be used there",
                          "configure the models through settings (RAG_LAB_LLM_PROVIDER …), or drop ray")
    with run_lock(out):  # one writer per run folder
        previous = _previous_manifest(out / MANIFEST, resume)  # a damaged one is named before anything else
        # another dataset's (or kind's) run is refused, or moved aside, before the index is built
        claim_run_folder(out, RunOwner("eval", dataset.name, dataset_hash(dataset),
                                       eval_summary({"modes": modes, "questions": len(pairs), "split": split})),
                         force=force, resume=resume)
        if any(needs_dataset(m) for m in modes):
            from rag_lab.index import build_index

            # no-op when up to date; a contextual variant (params["contextual"]) is built as `ir` builds it
            build_index(dataset, settings, progress=progress, contextual=params.get("contextual") or "none")
        plan = resolve_run(dataset, settings, modes, **resolved)  # once: everything below reads it
        return _run_locked(plan, out, pairs, previous, limit=limit, split=split, resume=resume, judge_llm=judge_llm,
                           conversations=conversations, progress=progress, llm=llm, agent_llm=agent_llm,
                           max_cost=max_cost, executor=executor, retry_failed=retry_failed, force=force)


def run_manifest(plan: RunPlan, pairs, *, limit, split, conversations) -> dict[str, Any]:
    """The manifest a run of ``plan`` writes (its config: what shaped its samples)."""
    config = {"modes": list(plan.modes), "limit": limit, "split": split, "rerank": plan.rerank, "judge": plan.judge_id,
              "params": plan.params, "conversations": conversations, "questions": len(pairs), "metrics": plan.metrics,
              "context_lines": plan.settings.context_lines,  # compression: lines kept per chunk (None: off)
              "prompt_version": plan.prompt_version, "index_fingerprint": plan.index_fingerprint}
    return build_manifest(dataset=plan.dataset, settings=plan.settings, config=config, models=dict(plan.models))


def _run_locked(plan: RunPlan, out: Path, pairs, previous: dict | None, *, limit, resume, judge_llm, conversations,
                progress, llm, agent_llm, max_cost, executor=None, retry_failed=False, split="all", force=False):
    from rag_lab.evaluate.store.frames import load_run

    dataset, settings, modes, params = plan.dataset, plan.settings, list(plan.modes), plan.params
    manifest_path = out / MANIFEST
    manifest = run_manifest(plan, pairs, limit=limit, split=split, conversations=conversations)
    config, models = manifest["config"], manifest["models"]
    if previous is None:  # another configuration's run (or other modes or questions) is refused, or moved aside
        claim_run_folder(out, owner_of(manifest), _differences(out, manifest, resume), force=force, resume=resume)
    else:
        check_same_configuration(previous, manifest, manifest_path)
        # a resumed run keeps the modes it had: the tables show every mode of the folder's one configuration
        config["modes"] = list(dict.fromkeys([*(previous.get("config") or {}).get("modes", []), *modes]))
        # like modes, a resumed run adds questions: dev + rest (or anything + all) is all
        config["split"] = split if (previous.get("config") or {}).get("split", "all") == split else "all"
        config["conversations"] = conversations or bool((previous.get("config") or {}).get("conversations"))
        if models["agent_llm"] is None:
            models["agent_llm"] = (previous.get("models") or {}).get("agent_llm")
    spec = SampleSpec(plan, dataset.dev_split)
    # This process's worker answers and scores the samples (without Ray), and prices them (--max-cost);
    # on Ray the actors build their own judge, and the driver builds one only to price samples. Built
    # before the manifest is written: a judge that cannot be built leaves the folder as it was.
    worker = SampleWorker(spec, llm=llm, agent_llm=agent_llm, judge_llm=judge_llm,
                          build_judge=executor is None or max_cost is not None)
    try:
        write_json_atomic(manifest_path, manifest)
        samples_on = executor or _here(worker)
        with samples_on(spec, plan.concurrency) as (run_sample, in_flight):
            guard = RunGuard(max_failures=settings.max_consecutive_failures, max_cost=max_cost)
            logs: dict[str, SampleLog] = {}
            costs: dict[str, Any] = {}
            items: list[tuple[str, tuple]] = []
            resumed = {"retry_failed": retry_failed, "rescored": {}, "kept_failures": {}}
            for mode in modes:
                logs[mode] = SampleLog(out / mode, resume=resume)
                # finished = recorded without a failure that may pass; a sample run again: its new line wins
                todo = pending(pairs, logs[mode].done, retry_failed)
                _count_resumed(resumed, mode, logs[mode].done, todo)
                if not todo:
                    continue
                if max_cost is not None:
                    costs[mode] = budget_for(plan, mode, worker.scorer, worker.answerer(mode), llm is not None)
                items += [(mode, item) for item in todo]
            if costs:
                guard.estimate = lambda entry: costs[entry[0]].estimate(entry[1])
                guard.spent = lambda record, estimate: costs[record["mode"]].spent(record, estimate)
            if previous is not None:  # what this resume runs again, and the failures it keeps
                manifest["resumes"] = [*(previous.get("resumes") or []), {"at": manifest["created_at"], **resumed}]
                write_json_atomic(manifest_path, manifest)
                if not items:
                    _nothing_left(out, resumed)
            # One pool for every mode: the next mode's samples start while the last ones of a mode finish
            # (a pool per mode idled its workers at every mode boundary).
            started = list(dict.fromkeys(mode for mode, _ in items))
            with progress_bar(total=len(items), desc="+".join(started) or "samples", unit="sample",
                              enabled=progress) as bar:
                run_in_flight(items, lambda entry: run_sample(*entry), lambda record: _write(logs[record["mode"]], record),
                              concurrency=in_flight, guard=guard, on_done=bar.update)
        if conversations:
            from rag_lab.evaluate.run.conversations import run_conversations

            run_conversations(dataset, settings, out, resume=resume, progress=progress, llm=agent_llm or llm,
                              **params)
    finally:
        worker.close()
    return load_run(out)


def _write(log: SampleLog, record: dict[str, Any]) -> None:
    """Append a finished sample; one run again by --resume keeps the scores its earlier line had."""
    from rag_lab.evaluate.plan.rescore import keep_scored

    log.append(keep_scored(log.done.get(record["id"]), record))


def _nothing_left(out: Path, resumed: dict[str, Any]) -> None:
    """Say that a resume found every sample finished (it shows the run's tables as they were)."""
    from rag_lab.errors import RagLabWarning, warn_at_caller

    kept = sum(resumed["kept_failures"].values())
    failures = f"; {kept} failed sample(s) kept (--retry-failed runs them again)" if kept else ""
    warn_at_caller(RagLabWarning(f"--resume: every sample in {out} is finished, nothing was run{failures}"))


def _count_resumed(resumed: dict[str, Any], mode: str, done: dict[str, dict[str, Any]], todo: list) -> None:
    from rag_lab.evaluate.plan.rescore import kept_failures

    again = {pair.id for pair, _ in todo}
    if rescored := sum(1 for sample_id in again if sample_id in done):
        resumed["rescored"][mode] = rescored
    if kept := sum(1 for sample_id, record in done.items() if sample_id not in again and kept_failures(record)):
        resumed["kept_failures"][mode] = kept


def chosen_metrics(metrics: Sequence[str] | None, out: Path, resume: bool) -> list[str] | None:
    """The run's metrics in the registry's order (None: all); a resumed run without a choice keeps its own.
    Unknown names are refused; a judged metric is computed only with a judge (`eval --metrics` refuses it
    without one)."""
    from rag_lab.evaluate.metrics import all_specs
    from rag_lab.evaluate.run.scorer import COVERAGE_METRICS, IR_METRICS

    if metrics is None and resume and (out / MANIFEST).exists():
        from rag_lab.evaluate.store.run_folder import read_manifest

        previous = read_manifest(out / MANIFEST, hint="drop --resume to start the run over in this folder")
        metrics = (previous.get("config") or {}).get("metrics")
    if metrics is None:
        return None
    specs = {s.name: s for s in all_specs()}
    known = [*specs, *IR_METRICS, *COVERAGE_METRICS]
    wanted = [m.strip() for m in metrics if m and m.strip()]
    unknown = [m for m in wanted if m not in known]
    if unknown or not wanted:
        raise ConfigError(f"Unknown or missing metric(s): {', '.join(unknown) or '(none)'}",
                          f"choose from {', '.join(known)}")
    return [m for m in known if m in wanted]


def _here(worker: SampleWorker) -> SampleExecutor:
    """The default executor: this process's worker, ``concurrency`` samples in flight on threads."""
    @contextmanager
    def samples_here(spec: SampleSpec, concurrency: int):
        yield worker, concurrency
    return samples_here


# What must be equal for a run to be resumed: (label shown to the user, manifest section, key).
# Modes, --limit and --conversations may differ (they add samples); everything else shapes them.
RESUME_KEYS = (
    ("model", "models", "llm"), ("agent model", "models", "agent_llm"), ("embedding model", "models", "embedding"),
    ("judge", "config", "judge"), ("rerank", "config", "rerank"), ("metrics", "config", "metrics"),
    ("prompt version", "config", "prompt_version"), ("index", "config", "index_fingerprint"),
    ("compression (lines kept per chunk)", "config", "context_lines"),
    ("temperature", "settings", "llm_temperature"), ("max tokens", "settings", "llm_max_tokens"),
    ("chunk words", "settings", "chunk_words"), ("chunk overlap", "settings", "chunk_overlap_words"),
    ("vector backend", "settings", "vector_backend"), ("LLM provider", "settings", "llm_provider"),
)
PARAM_LABELS = {"top_k": "top-k", "top_n": "top-n", "fusion_k": "fusion k", "prefetch": "prefetch",
                "dense_weight": "dense weight", "sparse_weight": "sparse weight"}
_ABSENT = object()


def configuration_differences(previous: dict, current: dict) -> list[str]:
    """``label: old → new`` for every setting that shapes samples and differs between two run
    manifests. A key an older manifest lacks is not compared; an agent model only when both ran the agent."""
    differences = []
    for label, section, key in RESUME_KEYS:
        old = (previous.get(section) or {}).get(key, _ABSENT)
        new = (current.get(section) or {}).get(key, _ABSENT)
        if old is _ABSENT or new is _ABSENT or (key == "agent_llm" and (old is None or new is None)):
            continue
        if old != new:
            differences.append(f"{label}: {old!r} → {new!r}")
    from rag_lab.retrieve.configuration import RENAMED

    # a manifest may name a lever by a name it had before (rrf_k): the same lever, not a change
    old_params = {RENAMED.get(k, k): v for k, v in ((previous.get("config") or {}).get("params") or {}).items()}
    new_params = (current.get("config") or {}).get("params") or {}
    defaults = lever_defaults()
    for key in sorted(set(old_params) | set(new_params)):
        # a lever given at its default value is the run without it: the same samples
        old, new = old_params.get(key, defaults.get(key)), new_params.get(key, defaults.get(key))
        if old != new:
            differences.append(f"{PARAM_LABELS.get(key, key)}: {_shown(key, old_params, old)} → "
                               f"{_shown(key, new_params, new)}")
    return differences


def _shown(key: str, params: dict, value: Any) -> str:
    """A lever's value in a difference: as given, or marked as the default it stands for."""
    return repr(value) if key in params else f"default ({value})" if value is not None else "default"


def lever_defaults() -> dict[str, Any]:
    """What each retrieval lever is when a run does not give it (top-k, top-n and the fused levers)."""
    from rag_lab.answer.engine import DEFAULT_TOP_K
    from rag_lab.answer.rerank import DEFAULT_TOP_N
    from rag_lab.retrieve.configuration import fused_defaults

    return {"top_k": DEFAULT_TOP_K, "top_n": DEFAULT_TOP_N, **fused_defaults()}


class ResumeMismatchError(ConfigError):
    """``resume`` asked of a folder whose run has another configuration."""


def check_same_configuration(previous: dict, current: dict, manifest_path: Path) -> None:
    differences = configuration_differences(previous, current)
    if differences:
        raise ResumeMismatchError(f"{manifest_path.parent}: cannot resume a run of another configuration "
                          f"({'; '.join(differences)})",
                          "resume with the run's own settings, use a new --out folder, or drop --resume to "
                          "start this folder over")


def _previous_manifest(manifest_path: Path, resume: bool) -> dict | None:
    """The manifest of the run being resumed (None when not resuming); its dataset is checked by the claim."""
    if not (resume and manifest_path.exists()):
        return None
    from rag_lab.evaluate.store.run_folder import read_manifest

    return read_manifest(manifest_path, hint="drop --resume to start the run over in this folder, "
                                             "or use a new --out folder")


# What a run starting over in its folder must also share with the run there (a resumed run adds to these).
SELECTION_LABELS = {"modes": "modes", "limit": "--limit", "split": "--split", "conversations": "--conversations"}


def _differences(out: Path, current: dict, resume: bool) -> list[str]:
    """What differs between the run in ``out`` (if any) and ``current``: the configuration, and without
    ``resume`` also its modes and questions (starting over would drop the old run's other samples)."""
    if not (out / MANIFEST).is_file():
        return []
    from rag_lab.evaluate.store.claim import changed
    from rag_lab.evaluate.store.run_folder import read_manifest

    previous = read_manifest(out / MANIFEST, hint="move the folder aside (or pass --force), or use a new --out folder")
    differences = configuration_differences(previous, current)
    if not resume:
        old, new = dict(previous.get("config") or {}), dict(current.get("config") or {})
        for config in (old, new):  # the same modes in another order are the same run
            if "modes" in config:
                config["modes"] = sorted(config["modes"] or [])
        differences += changed(old, new, SELECTION_LABELS)
    return differences
