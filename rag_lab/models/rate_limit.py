"""Requests-per-minute limit per provider endpoint (``RAG_LAB_LLM_RPM``), shared by every thread
and event loop of the process: a token bucket of one-minute capacity. It hooks the httpx clients
the openai SDK uses, so every HTTP attempt (retries included) takes a token; the SDK's own retry
with backoff and ``Retry-After`` stays the one retry layer.

Waiting for a token is not the provider's time: the wait is added to the :class:`WaitMeter` of the
current context (the scorer opens one per sample, so its judge deadline measures provider work
only), and the progress line says when a run waits for the limit. Under Ray every worker takes its
tokens from one bucket per endpoint (:func:`share_buckets`, a Ray actor that hands them out).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable
from typing import Protocol

import httpx


class TokenBucket:
    """``rate`` requests per minute, at most ``burst`` at once (default: one second's worth, ≥ 1)."""

    def __init__(self, rpm: float, burst: float | None = None, clock=time.monotonic) -> None:
        self.interval = 60.0 / rpm
        self.capacity = max(1.0, burst if burst is not None else rpm / 60.0)
        self._clock = clock
        self._tokens = self.capacity
        self._stamp = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take a token now; returns the seconds to wait before using it (0 when one was free)."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.capacity, self._tokens + (now - self._stamp) / self.interval)
            self._stamp = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens * self.interval


class Bucket(Protocol):
    def reserve(self) -> float: ...


_BUCKETS: dict[tuple[str, float], Bucket] = {}
_BUCKETS_LOCK = threading.Lock()
# Where buckets come from: this process (default), or a source shared by every worker of a run (Ray).
_SOURCE: Callable[[str, float], Bucket] | None = None


def share_buckets(source: Callable[[str, float], Bucket] | None) -> None:
    """Take every bucket built after this from ``source(endpoint, rpm)`` (None: this process's own);
    a Ray worker calls it with a bucket that asks the run's one bucket actor."""
    global _SOURCE
    with _BUCKETS_LOCK:
        _SOURCE = source
        _BUCKETS.clear()


def bucket_for(endpoint: str, rpm: float) -> Bucket:
    """One bucket per (endpoint, limit) in the process: the generator and judge of one server share it."""
    with _BUCKETS_LOCK:
        if (endpoint, rpm) not in _BUCKETS:
            _BUCKETS[(endpoint, rpm)] = _SOURCE(endpoint, rpm) if _SOURCE is not None else TokenBucket(rpm)
        return _BUCKETS[(endpoint, rpm)]


class WaitMeter:
    """Seconds the requests of one piece of work (a sample's judged metrics) waited for the limit."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._lock = threading.Lock()

    def add(self, seconds: float) -> None:
        with self._lock:
            self.seconds += seconds


_METER: contextvars.ContextVar[WaitMeter | None] = contextvars.ContextVar("rag_lab_rate_wait", default=None)


def metered(meter: WaitMeter) -> None:
    """Count this context's waits for the limit (and those of the tasks and threads it starts) in ``meter``."""
    _METER.set(meter)


NOTE_INTERVAL = 10.0  # seconds between "waiting for the rate limit" notes of one endpoint
_noted: dict[str, float] = {}


def _waiting(endpoint: str, rpm: float, delay: float) -> None:
    """Book a wait: on the current meter (it extends that work's deadline) and, now and then, on the progress line."""
    if (meter := _METER.get()) is not None:
        meter.add(delay)
    now = time.monotonic()
    with _BUCKETS_LOCK:
        if now - _noted.get(endpoint, -NOTE_INTERVAL) < NOTE_INTERVAL:
            return
        _noted[endpoint] = now
    from rag_lab.progress import progress_note

    progress_note(f"waiting {delay:.1f} s for the rate limit at {endpoint} (RAG_LAB_LLM_RPM={rpm:g}); "
                  "a slower run, no failed request")


def attach_rate_limit(client: httpx.Client, aclient: httpx.AsyncClient, bucket: Bucket, endpoint: str = "",
                      rpm: float = 0.0) -> None:
    def on_request(request: httpx.Request) -> None:
        if (delay := bucket.reserve()) > 0:
            _waiting(endpoint or str(request.url.host), rpm, delay)
            time.sleep(delay)

    async def aon_request(request: httpx.Request) -> None:
        # a shared bucket asks another process (Ray): not on the event loop, which serves every sample
        delay = bucket.reserve() if isinstance(bucket, TokenBucket) else await asyncio.to_thread(bucket.reserve)
        if delay > 0:
            _waiting(endpoint or str(request.url.host), rpm, delay)
            await asyncio.sleep(delay)

    client.event_hooks["request"].insert(0, on_request)
    aclient.event_hooks["request"].insert(0, aon_request)
