"""Run retrieval modes over a dataset's questions, score every answer, keep every result.

    from rag_lab.evaluate import run_evaluation, load_run
    run = run_evaluation("texas_childcare", modes=["bm25", "hybrid"], out="runs/try", limit=10)
    run.summary        # per mode × metric: mean, n, nan
    run.samples        # per sample × metric (tidy)

Layout: ``<out>/manifest.json`` and ``<out>/<mode>/samples.jsonl`` (one line per finished
sample, appended and fsynced at once). ``resume=True`` skips finished samples; a failing sample
is recorded with its error and the run goes on. Answers and judged scores are cached on disk
(``<data_dir>/cache/llm.sqlite``), so re-running an unchanged sample costs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rag_lab.config import Settings, get_settings
from rag_lab.datasets import Dataset, QAPair, resolve_dataset, spread_by_source
from rag_lab.errors import ConfigError
from rag_lab.evaluate.answering import CachedAnswerer, model_id
from rag_lab.evaluate.cost import cost_usd
from rag_lab.evaluate.manifest import build_manifest
from rag_lab.evaluate.scoring import Scorer, citation_summary, timed_score
from rag_lab.evaluate.store import MANIFEST, SampleLog, write_json_atomic
from rag_lab.models.llm.disk_cache import DiskCache
from rag_lab.progress import progress_bar

DEFAULT_MODES = ("dense", "bm25", "fusion", "hybrid")
EVAL_MODES = ("dense", "bm25", "fusion", "hybrid", "kendra", "agent")


def questions(dataset: Dataset, limit: int | None = None) -> list[tuple[QAPair, dict[str, int]]]:
    """The dataset's questions with their relevant documents (``{doc: grade}``; empty if unknown).

    Q&A files first (reference answers, source files); otherwise BEIR queries with their qrels."""
    if dataset.has_qa:
        pairs = [(p, dict.fromkeys(p.source_files, 1)) for p in dataset.load_qa()]
    elif dataset.has_beir_queries:
        qrels = dataset.load_qrels()
        pairs = [(QAPair(qid, text, None, tuple(qrels.get(qid, {}))), dict(qrels.get(qid, {})))
                 for qid, text in dataset.load_queries().items() if qid in qrels]
    else:
        raise ConfigError(f"Dataset {dataset.name!r} has no questions",
                          "add a qa.jsonl next to the documents (see README: 'Your own corpus')")
    if limit is not None:  # a sample spread over the source documents, not the file's first lines
        by_id = {p.id: (p, relevant) for p, relevant in pairs}
        pairs = [by_id[i] for i in spread_by_source(list(by_id), {p.id: sorted(r) for p, r in pairs}, limit)]
    return pairs


def parse_judge(spec: str) -> tuple[str, str | None]:
    """``"openai"`` / ``"openai:gpt-5-mini"`` / ``"bedrock:amazon.nova-pro-v1:0"`` → (provider, model)."""
    provider, _, model = spec.partition(":")
    if provider not in ("local", "openai", "groq", "bedrock"):
        raise ConfigError(f"Unknown judge provider {provider!r} in --judge {spec!r}",
                          "use PROVIDER[:MODEL] with PROVIDER one of local, openai, groq, bedrock")
    return provider, model or None


def judge_settings(settings: Settings, spec: str) -> Settings:
    provider, model = parse_judge(spec)
    return settings.model_copy(update={"llm_provider": provider, "llm_model": model})


def _index_fingerprint(mode: str, dataset: Dataset, settings: Settings) -> str:
    if mode == "kendra":
        return f"kendra:{settings.kendra_index_id}"
    from rag_lab.index import CorpusIndex

    return CorpusIndex.open(dataset, settings).manifest.fingerprint


class _Answerers:
    """One LLM for every engine mode (loaded once), the agent's own, built lazily."""

    def __init__(self, settings: Settings, dataset: Dataset, rerank: bool, params: dict[str, Any],
                 llm: Any = None, agent_llm: Any = None) -> None:
        self.settings, self.dataset, self.rerank, self.params = settings, dataset, rerank, params
        self._llm, self._agent_llm = llm, agent_llm

    def build(self, mode: str):
        from rag_lab.answer import make_answerer
        from rag_lab.models.llm import get_llm

        if mode == "agent":
            from rag_lab.answer.adapter import AgentAnswerer
            from rag_lab.answer.agent import RagAgent

            if self._agent_llm is None:
                self._agent_llm = get_llm(self.settings, for_agent=True)
            agent = RagAgent(settings=self.settings, dataset=self.dataset, llm=self._agent_llm, **self.params)

            def fresh(question: str):  # every Q&A sample is a new conversation
                agent.reset()
                return agent.chat(question)
            return AgentAnswerer(fresh)
        if self._llm is None:
            self._llm = get_llm(self.settings)
        return make_answerer(mode, self.settings, self.dataset, rerank=self.rerank, llm=self._llm, **self.params)


def evaluate_sample(pair: QAPair, relevant: dict[str, int], mode: str, answerer: CachedAnswerer,
                    scorer: Scorer) -> dict[str, Any]:
    """One run record: the answer (or its error), its citations and its scores."""
    record: dict[str, Any] = {
        "id": pair.id, "mode": mode, "question": pair.question, "reference": pair.reference_answer,
        "source_files": list(pair.source_files), "relevant": relevant, "error": None, "cached": False,
    }
    try:
        fields, cached = answerer.answer(pair.question)
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        record.update(answer=None, contexts=[], latency={}, usage={}, scores={}, score_errors={},
                      error=f"{type(exc).__name__}: {exc}"[:1000])
        return record
    record.update(fields, cached=cached)
    usage = record.get("usage") or {}
    record["cost_usd"] = cost_usd(answerer.model_id, int(usage.get("prompt_tokens", 0)),
                                  int(usage.get("completion_tokens", 0)))
    record["citations"] = citation_summary(record)
    scores, errors, seconds = timed_score(scorer, record)
    record["scores"], record["score_errors"] = scores, errors
    record["latency"]["score"] = seconds
    return record


def run_evaluation(
    dataset: Dataset | str,
    settings: Settings | None = None,
    modes: Sequence[str] = DEFAULT_MODES,
    out: str | Path = "runs/eval",
    *,
    limit: int | None = None,
    resume: bool = False,
    judge: str | None = None,
    judge_llm: Any = None,
    rerank: bool = True,
    conversations: bool = False,
    progress: bool = True,
    llm: Any = None,
    agent_llm: Any = None,
    metrics: list[str] | None = None,
    **params: Any,
):
    """Evaluate ``modes`` on ``dataset``; returns :func:`load_run` of ``out``.

    ``judge`` (``PROVIDER[:MODEL]``) turns on the LLM-judged metrics (``judge_llm`` injects the
    judge's LLM, e.g. one with a test transport); ``llm`` / ``agent_llm`` inject the generator.
    ``params`` go to the answerers (top_k, top_n, rrf_k, prefetch, weights …).
    """
    from rag_lab.evaluate.frames import load_run

    settings = settings or get_settings()
    if isinstance(dataset, (str, Path)):
        dataset = resolve_dataset(dataset, settings.datasets_dir)
    modes = list(modes)
    unknown = [m for m in modes if m not in EVAL_MODES]
    if unknown or not modes:
        raise ConfigError(f"Unknown or missing mode(s): {', '.join(unknown) or '(none)'}",
                          f"choose from {', '.join(EVAL_MODES)}")
    out = Path(out)
    pairs = questions(dataset, limit)
    judge_id = None
    if judge:
        from rag_lab.evaluate.judge import build_judge, judge_id as judge_identity

        judge_cfg = judge_settings(settings, judge)
        judge_id = judge_identity(judge_cfg)
        if judge_llm is None:
            judge_llm = build_judge(judge_cfg)
    if any(m != "kendra" for m in modes):
        from rag_lab.index import build_index

        build_index(dataset, settings, progress=progress)  # no-op when up to date
    config = {"modes": modes, "limit": limit, "rerank": rerank, "judge": judge_id, "params": params,
              "conversations": conversations, "questions": len(pairs)}
    manifest_path = out / MANIFEST
    _check_resume(manifest_path, dataset, resume)
    models = {"llm": model_id(settings, llm=llm),
              "agent_llm": model_id(settings, for_agent=True, llm=agent_llm) if "agent" in modes else None,
              "embedding": f"{settings.embed_provider}:{settings.embed_model_name}", "judge": judge_id}
    write_json_atomic(manifest_path, build_manifest(dataset=dataset, settings=settings, config=config, models=models))

    cache = DiskCache(settings.cache_dir / "llm.sqlite")
    try:
        scorer = Scorer(settings, judge_llm=judge_llm, judge_id=judge_id, cache=cache, metrics=metrics)
        factory = _Answerers(settings, dataset, rerank, params, llm=llm, agent_llm=agent_llm)
        base_inputs = {"rerank": rerank, "params": params, "temperature": settings.llm_temperature,
                       "max_tokens": settings.llm_max_tokens, "context_lines": settings.context_lines}
        for mode in modes:
            log = SampleLog(out / mode, resume=resume)
            # finished = recorded without an error; a failed sample is retried (its new line wins)
            todo = [(p, rel) for p, rel in pairs if p.id not in log.done or log.done[p.id].get("error")]
            if not todo:
                continue
            answerer = CachedAnswerer(
                mode, lambda m=mode: factory.build(m), model_id=models["agent_llm" if mode == "agent" else "llm"],
                inputs={**base_inputs, "index": _index_fingerprint(mode, dataset, settings)}, cache=cache)
            for pair, relevant in progress_bar(todo, desc=mode, unit="sample", enabled=progress):
                log.append(evaluate_sample(pair, relevant, mode, answerer, scorer))
        if conversations:
            from rag_lab.evaluate.conversations import run_conversations

            run_conversations(dataset, settings, out, resume=resume, progress=progress, llm=agent_llm or llm,
                              **params)
    finally:
        cache.close()
    return load_run(out)


def _check_resume(manifest_path: Path, dataset: Dataset, resume: bool) -> None:
    if not (resume and manifest_path.exists()):
        return
    import json

    from rag_lab.evaluate.manifest import dataset_hash

    previous = json.loads(manifest_path.read_text(encoding="utf-8"))
    if previous.get("dataset", {}).get("hash") != dataset_hash(dataset):
        raise ConfigError(f"{manifest_path.parent}: resuming a run of different data "
                          f"({previous.get('dataset', {}).get('name')!r}, other files)",
                          "use a new --out folder, or drop --resume to start this one over")


