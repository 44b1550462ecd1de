"""Score one run record with the registered RAGAS metrics (and ranx, where qrels exist).

The record becomes a RAGAS ``SingleTurnSample``: the answer, the chunks given to the LLM (their
texts and, at document level, their ids), the reference answer and the relevant documents.
Each metric is isolated: one that raises leaves ``None`` and its error, the others still score.
Judged scores are cached on disk, keyed by the judge's identity (provider, endpoint and model, or
an injected LLM's class and configuration), its output settings (temperature, token budget, the
local model's window) and, for the constrained judge, its design; RAGAS version + metric, every
sample field the RAGAS metric reads, and the embedding model where the metric embeds.

A failing judge costs bounded time: the SDK is the one retry layer (``max_retries``), the judged
metrics of one sample share a deadline (``judge_deadline``: the constrained judge starts no call or
retry after it, see ``judge.constrained.call_deadline``) that measures the provider's work: time
waiting for the requests-per-minute limit (``RAG_LAB_LLM_RPM``) moves it later, so a rate-limited
run is slower, never NaN; and once the judge refuses access
(401/403/404) it is not asked again in this run: each later judged metric records that refusal.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import threading
import time
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

from rag_lab.background_loop import BackgroundLoop  # noqa: E402
from rag_lab.evaluate.facts.citations import check_citations  # noqa: E402
from rag_lab.evaluate.metrics import MetricContext, MetricSpec, all_specs  # noqa: E402
from rag_lab.models.llm._guard import ProviderAccessError  # noqa: E402
from rag_lab.models.llm.disk_cache import DiskCache, cache_key  # noqa: E402
from rag_lab.models.llm.identity import llm_identity, output_settings  # noqa: E402

IR_METRICS = ("mrr@10", "ndcg@10")
# Where a reference's key facts were lost: the chunks the LLM read (retrieval), the evidence selected
# from them (selection, evidence-first answers only), the answer (writing: key_fact_recall).
COVERAGE_METRICS = ("context_key_fact_coverage", "evidence_key_fact_coverage")


def doc_ids(contexts: list[dict[str, Any]], relevant: dict[str, int]) -> list[str]:
    """Document-level ids of the contexts in rank order (once each), spelled like ``relevant``:
    the path-like doc_id when the judgements use paths, else the file name."""
    ids: list[str] = []
    for ctx in contexts:
        doc_id, filename = ctx.get("doc_id"), ctx.get("filename")
        key = doc_id if doc_id in relevant else filename if filename in relevant else (doc_id or filename)
        if key is not None and str(key) not in ids:
            ids.append(str(key))
    return ids


def to_sample(record: dict[str, Any]):
    from ragas.dataset_schema import SingleTurnSample

    contexts = record.get("contexts") or []
    relevant = record.get("relevant") or {}
    return SingleTurnSample(
        user_input=record["question"],
        response=record.get("answer") or None,
        reference=record.get("reference") or None,
        retrieved_contexts=[c["text"] for c in contexts] or None,
        retrieved_context_ids=doc_ids(contexts, relevant) or None,
        reference_context_ids=list(relevant) or None,
    )


def _finite(value: Any) -> float | None:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


class JudgeNotAsked(RuntimeError):
    """A judged metric left unscored without a call: the deadline had passed or access was refused."""


class Scorer:
    """``score(record) -> (scores, errors)``; metric objects are built once, on first use.
    Judged scores' cache keys name the judge by :func:`llm_identity` (see :meth:`judge_key`)."""

    def __init__(self, settings: Any, *, judge_llm: Any = None, cache: DiskCache | None = None,
                 metrics: list[str] | None = None, embedding_id: str | None = None) -> None:
        self.context = MetricContext(settings, judge_llm)
        self._embedding_id = embedding_id  # the run plan's; else resolved once, when a metric embeds
        self.specs: list[MetricSpec] = [s for s in all_specs() if (not s.judged or judge_llm is not None)
                                        and (metrics is None or s.name in metrics)]
        self.cache = cache
        self.ir_metrics = [m for m in IR_METRICS if metrics is None or m in metrics]
        self.coverage_metrics = [m for m in COVERAGE_METRICS if metrics is None or m in metrics]
        self.judge_identity = llm_identity(judge_llm) if judge_llm is not None else None
        # an object LLM's identity hashes its whole configuration; a named one's leaves these out
        self.judge_settings = (output_settings(judge_llm) if judge_llm is not None
                               and not self.judge_identity.startswith("object:") else None)
        self.deadline = judge_deadline(settings, judge_llm, sum(s.judged for s in self.specs))
        self._refusal: str | None = None  # the judge's access refusal, once seen
        self._built: dict[str, Any] = {}
        # One loop for every metric: the judge's async HTTP clients pool their connections per loop
        # (a new loop per call would find the pooled connection dead and spend a retry on it).
        self._loop = BackgroundLoop("rag-lab-metrics", owner="the scorer",
                                    hint="await the metric (single_turn_ascore) instead of calling score()")
        self._lock = threading.RLock()  # samples in flight (--concurrency) share metrics and loop

    @property
    def embedding_id(self) -> str:
        """The embedding model's name in the cache key of a metric that embeds."""
        if self._embedding_id is None:
            from rag_lab.models import embed_model_id

            self._embedding_id = embed_model_id(self.context.settings)
        return self._embedding_id

    @property
    def metric_names(self) -> list[str]:
        return [s.name for s in self.specs]

    def _metric(self, spec: MetricSpec) -> Any:
        with self._lock:
            if spec.name not in self._built:
                self._built[spec.name] = spec.build(self.context)
            return self._built[spec.name]

    def judge_of(self, metric: str) -> Any:
        """The RAGAS LLM that judges ``metric`` (a ``ConstrainedJudge`` for the local model), built if
        needed; None when this scorer has no such judged metric."""
        spec = next((s for s in self.specs if s.name == metric and s.judged), None)
        return None if spec is None else self._metric(spec).llm

    def score(self, record: dict[str, Any]) -> tuple[dict[str, float | None], dict[str, str]]:
        sample = to_sample(record)
        scores: dict[str, float | None] = {}
        errors: dict[str, str] = {}
        deadline = _Deadline(self.deadline)
        for spec in self.specs:
            if any(not getattr(sample, f) for f in spec.requires) or (spec.applies and not spec.applies(sample)):
                continue  # not applicable: no score (a user with questions only gets the rest)
            try:
                value = self._judged(spec, sample, deadline) if spec.judged else self._run(spec, sample)
            except Exception as exc:  # noqa: BLE001 - recorded per metric, never fatal
                scores[spec.name], errors[spec.name] = None, f"{type(exc).__name__}: {exc}"[:500]
                continue
            scores[spec.name] = _finite(value)
            if scores[spec.name] is None:
                errors[spec.name] = "NaN score"
        if self.ir_metrics:
            scores.update({m: v for m, v in ir_scores(record).items() if m in self.ir_metrics})
        if self.coverage_metrics:
            scores.update({m: v for m, v in coverage_scores(record).items() if m in self.coverage_metrics})
        return scores, errors

    def _run(self, spec: MetricSpec, sample) -> float:
        metric = self._metric(spec)
        if getattr(metric, "embeddings", None) is None and getattr(metric, "llm", None) is None and not _in_a_loop():
            # pure CPU (ROUGE, key facts, citations …): in this sample's own thread. On the shared loop it
            # held up the judge requests of every other sample in flight while it ran (--concurrency).
            return asyncio.run(metric.single_turn_ascore(sample))
        return self._await(metric.single_turn_ascore(sample))  # a model client: bound to the shared loop

    def _await(self, coro):
        return self._loop.run(coro)

    def judge_key(self, spec: MetricSpec, sample) -> str:
        """The cache key of a judged score: judge identity, RAGAS version and metric, every sample
        field the RAGAS metric reads (faithfulness reads the question too), and the embedding model
        of a metric that embeds (response relevancy); the judge's output settings and, for the
        constrained judge, its design (budget, schema rule, retries)."""
        import ragas
        from ragas.metrics.base import MetricType

        metric = self._metric(spec)
        read = set(spec.requires) | set(getattr(metric, "required_columns", {}).get(MetricType.SINGLE_TURN.name, ()))
        inputs: dict[str, Any] = {"sample": sample.model_dump(include={f.removesuffix(":optional") for f in read})}
        if getattr(metric, "embeddings", None) is not None:
            inputs["embedding"] = self.embedding_id
        if self.judge_settings is not None:
            inputs["judge_settings"] = self.judge_settings
        if (design := getattr(getattr(metric, "llm", None), "design", None)) is not None:
            inputs["judge_design"] = design
        # a RAGAS prompt replaced by one of ours (e.g. per-statement NLI) asks differently: keyed by its
        # class, its version (rules outside the text, e.g. what may be quoted) and its text (instruction,
        # schema, examples), so an edited prompt misses even if nobody bumped the version
        replaced = {name: f"{type(p).__module__}.{type(p).__qualname__}@{getattr(p, 'design', '')}#"
                          + hashlib.sha256(p.to_string().encode()).hexdigest()[:16]
                    for name, p in metric.get_prompts().items()
                    if not type(p).__module__.startswith("ragas.")}
        if replaced:
            inputs["prompts"] = replaced
        # the versions of the judge's rules this metric uses (numbers, negation, statement split …): a
        # changed rule decides verdicts as a changed prompt does (rag_lab.evaluate.judge.versions)
        if rules := getattr(metric, "rule_versions", None):
            inputs["rules"] = dict(sorted(rules.items()))
        return cache_key("judge", model=str(self.judge_identity), prompt_version=f"ragas-{ragas.__version__}:{spec.name}",
                         inputs=inputs)

    def _judged(self, spec: MetricSpec, sample, deadline: "_Deadline") -> float | None:
        key = self.judge_key(spec, sample)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return hit["score"]
        if self._refusal is not None:
            raise JudgeNotAsked(f"not asked: the judge refused access earlier in this run ({self._refusal})")
        deadline.start()  # the clock runs from the first judged call: building metrics and models is not judging
        if deadline.at() - time.monotonic() <= 0:
            raise JudgeNotAsked(f"not asked: this sample's judge deadline ({self.deadline:g} s, "
                                "RAG_LAB_JUDGE_DEADLINE) had passed")
        try:
            value = _finite(self._await(_before(deadline, self._metric(spec).single_turn_ascore(sample))))
        except TimeoutError:
            raise TimeoutError(f"cut off at this sample's judge deadline ({self.deadline:g} s; raise "
                               "RAG_LAB_JUDGE_DEADLINE for a slow judge)") from None
        except ProviderAccessError as exc:
            self._refusal = exc.message
            raise
        if self.cache is not None and value is not None:  # a NaN is retried next time, never cached
            self.cache.put(key, {"score": value}, kind="judge")
        return value


class _Deadline:
    """A sample's judge deadline (``time.monotonic()``): ``seconds`` from its first judged call (so a
    worker building its metrics and models on its first sample is not cut off), moved later by every
    second its requests waited for the rate limit (their :class:`WaitMeter`): the deadline bounds the
    provider's work, not the queue."""

    def __init__(self, seconds: float) -> None:
        from rag_lab.models.rate_limit import WaitMeter

        self._seconds, self._at, self.waits = seconds, None, WaitMeter()

    def start(self) -> None:
        if self._at is None:
            self._at = time.monotonic() + self._seconds

    def at(self) -> float:
        self.start()
        return self._at + self.waits.seconds


def _in_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _before(deadline: _Deadline, coro):
    """``coro`` cut off at ``deadline``; the constrained judge reads the same deadline (a context
    variable: it follows the judge's calls into their worker threads), so a cut-off metric starts no
    further call or retry. The requests' waits for the rate limit are booked on the deadline (a context
    variable too), and the cut-off is checked again after each wait moved it."""
    from rag_lab.evaluate.judge.constrained import call_deadline
    from rag_lab.models.rate_limit import metered

    call_deadline.set(deadline.at())  # the local judge has no rate limit: its deadline does not move
    metered(deadline.waits)
    task = asyncio.ensure_future(coro)
    try:
        while (remaining := deadline.at() - time.monotonic()) > 0:
            done, _ = await asyncio.wait({task}, timeout=remaining)
            if done:
                return task.result()
        raise TimeoutError
    finally:
        if not task.done():
            task.cancel()
            await asyncio.wait({task})  # let it unwind (its HTTP request closed) before the next metric


PROVIDER_JUDGE_DEADLINE = 300.0
LOCAL_JUDGE_SECONDS_PER_METRIC = 900.0


def judge_deadline(settings: Any, judge_llm: Any, judged_metrics: int) -> float:
    """Seconds the judged metrics of one sample may take together: ``settings.judge_deadline`` when
    set, else 300 s for a provider judge and 900 s per judged metric for the local (schema-constrained,
    in-process) judge, whose calls are bounded by their token budget but take minutes on 2 cores."""
    if settings.judge_deadline is not None:
        return float(settings.judge_deadline)
    if getattr(judge_llm, "supports_constrained_output", False):
        return LOCAL_JUDGE_SECONDS_PER_METRIC * max(judged_metrics, 1)
    return PROVIDER_JUDGE_DEADLINE


_RANX_LOCK = threading.Lock()


def ir_scores(record: dict[str, Any]) -> dict[str, float]:
    """ranx MRR@10 and nDCG@10 of the contexts' documents against the relevant ones."""
    relevant = record.get("relevant") or {}
    if not relevant:
        return {}
    from rag_lab.evaluate.retrieval.ir import score_run

    ranked = doc_ids(record.get("contexts") or [], relevant)
    run = {record["id"]: {doc: 1.0 / rank for rank, doc in enumerate(ranked, start=1)}}
    with _RANX_LOCK:  # ranx runs numba parallel loops; numba's workqueue layer aborts on concurrent use
        _, per_query = score_run(run, {record["id"]: relevant}, metrics=IR_METRICS)
    return {m: float(per_query[m].get(record["id"], 0.0)) for m in IR_METRICS}


def coverage_scores(record: dict[str, Any]) -> dict[str, float]:
    """The share of the reference's key facts (less the question's) that the chunks given to the LLM
    state, and, for an evidence-first answer, that its selected evidence states: beside
    ``key_fact_recall`` (the answer) they show whether retrieval, selection or writing lost a fact.
    Empty when key-fact recall is not defined (no reference, or one stating no fact the question does not)."""
    from rag_lab.evaluate.facts.key_facts import key_fact_recall

    reference, question = record.get("reference") or "", record.get("question") or ""
    contexts = "\n\n".join(c.get("text") or "" for c in record.get("contexts") or [])
    context = key_fact_recall(contexts, reference, question) if reference else None
    if context is None:
        return {}
    scores = {"context_key_fact_coverage": context}
    if record.get("evidence"):
        evidence = "\n".join(item.get("text") or "" for item in record["evidence"])
        scores["evidence_key_fact_coverage"] = key_fact_recall(evidence, reference, question) or 0.0
    return scores


def citation_summary(record: dict[str, Any]) -> dict[str, Any]:
    check = check_citations(record.get("answer") or "", [c["text"] for c in record.get("contexts") or []])
    return {"cites": check.cites_anything, "checked": check.checked, "correct": check.correct,
            "unverifiable": check.unverifiable}


def timed_score(scorer: Scorer, record: dict[str, Any]) -> tuple[dict, dict, float]:
    started = time.perf_counter()
    scores, errors = scorer.score(record)
    return scores, errors, time.perf_counter() - started
