"""Requests-per-minute limit per provider endpoint (``RAG_LAB_LLM_RPM``), shared by every thread
and event loop of the process: a token bucket of one-minute capacity. It hooks the httpx clients
the openai SDK uses, so every HTTP attempt (retries included) takes a token; the SDK's own retry
with backoff and ``Retry-After`` stays the one retry layer.
"""

from __future__ import annotations

import asyncio
import threading
import time

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


_BUCKETS: dict[tuple[str, float], TokenBucket] = {}
_BUCKETS_LOCK = threading.Lock()


def bucket_for(endpoint: str, rpm: float) -> TokenBucket:
    """One bucket per (endpoint, limit) in the process: the generator and judge of one server share it."""
    with _BUCKETS_LOCK:
        return _BUCKETS.setdefault((endpoint, rpm), TokenBucket(rpm))


def attach_rate_limit(client: httpx.Client, aclient: httpx.AsyncClient, bucket: TokenBucket) -> None:
    def on_request(request: httpx.Request) -> None:
        if (delay := bucket.reserve()) > 0:
            time.sleep(delay)

    async def aon_request(request: httpx.Request) -> None:
        if (delay := bucket.reserve()) > 0:
            await asyncio.sleep(delay)

    client.event_hooks["request"].insert(0, on_request)
    aclient.event_hooks["request"].insert(0, aon_request)
