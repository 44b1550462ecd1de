"""A run's samples on Ray actors (``rag-lab eval --ray``).

Each actor holds one :class:`rag_lab.evaluate.run.sample_worker.SampleWorker` — the same per-sample
work as a run without Ray — and so loads its generator, judge and index once. The driver's
:func:`rag_lab.schedule.run_in_flight` is unchanged: its threads each wait on one actor
call, and the driver alone appends and fsyncs the records that come back, so ``--resume``, the
budget and the failure streak work exactly as without Ray.

``RAG_LAB_LLM_RPM`` is one budget per endpoint for the whole run: one :class:`_BucketActor` holds the
token buckets, and every actor's HTTP clients take their tokens from it (one small actor call per
request; the wait itself happens in the worker, so the bucket actor never blocks).
"""

from __future__ import annotations

import math
import queue
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from rag_lab.distributed.cluster import RayCluster, import_ray
from rag_lab.errors import RagLabError
from rag_lab.evaluate.run.sample_worker import SampleExecutor, SampleSpec


class _BucketActor:
    """The run's token buckets, one per (endpoint, requests per minute): ``reserve`` takes a token and
    returns the seconds the caller must wait before its request."""

    def __init__(self) -> None:
        self.buckets: dict[tuple[str, float], Any] = {}

    def reserve(self, endpoint: str, rpm: float) -> float:
        from rag_lab.models.rate_limit import TokenBucket

        return self.buckets.setdefault((endpoint, rpm), TokenBucket(rpm)).reserve()


class _SharedBucket:
    """A bucket of this worker that asks the run's :class:`_BucketActor` for each token."""

    def __init__(self, actor: Any, endpoint: str, rpm: float) -> None:
        self.actor, self.endpoint, self.rpm = actor, endpoint, rpm

    def reserve(self) -> float:
        return import_ray().get(self.actor.reserve.remote(self.endpoint, self.rpm))


class _SampleActor:
    def __init__(self, spec: SampleSpec, buckets: Any = None) -> None:
        from rag_lab.evaluate.run.sample_worker import SampleWorker

        if buckets is not None:  # before the worker builds its HTTP clients (they pick their buckets then)
            from rag_lab.models.rate_limit import share_buckets

            share_buckets(lambda endpoint, rpm: _SharedBucket(buckets, endpoint, rpm))
        self.worker = SampleWorker(spec)

    def evaluate(self, mode: str, item: Any) -> dict[str, Any]:
        return self.worker(mode, item)


@contextmanager
def ray_samples(cluster: RayCluster, spec: SampleSpec,
                concurrency: int) -> Iterator[tuple[Callable[[str, Any], dict[str, Any]], int]]:
    """``(run_sample(mode, item) -> record, samples in flight)`` on ``cluster.worker_count`` actors,
    each taking ``ceil(concurrency / actors)`` samples at once (an I/O-bound remote model
    overlaps them; the local model takes one at a time)."""
    with cluster:
        ray = import_ray()
        actors_n = cluster.worker_count
        per_actor = max(1, math.ceil(concurrency / actors_n))
        actor_class = ray.remote(num_cpus=1, max_concurrency=per_actor)(_SampleActor)
        judge_cfg = spec.plan.judge_cfg
        rate_limited = spec.plan.settings.llm_rpm or (judge_cfg is not None and judge_cfg.llm_rpm)
        # one requests-per-minute budget for every actor (num_cpus=0: it only counts tokens)
        buckets = ray.remote(num_cpus=0)(_BucketActor).remote() if rate_limited else None
        actors = [actor_class.remote(spec, buckets) for _ in range(actors_n)]
        free: queue.Queue = queue.Queue()
        for actor in actors:
            for _ in range(per_actor):
                free.put(actor)

        def run_sample(mode: str, item: Any) -> dict[str, Any]:
            actor = free.get()
            try:
                return ray.get(actor.evaluate.remote(mode, item))
            except ray.exceptions.RayError as exc:
                raise RagLabError(f"a Ray actor failed while evaluating {mode} sample {item[0].id!r}: "
                                  f"{str(exc).strip().splitlines()[-1][:400]}",
                                  "finished samples are kept: fix the cause, then rag-lab eval --resume") from exc
            finally:
                free.put(actor)

        try:
            yield run_sample, actors_n * per_actor
        finally:
            for actor in [*actors, *([buckets] if buckets is not None else [])]:
                ray.kill(actor)


def ray_sample_executor(cluster: RayCluster) -> SampleExecutor:
    """The ``executor`` that :func:`rag_lab.evaluate.run_evaluation` takes, on ``cluster``'s actors."""
    return partial(ray_samples, cluster)
