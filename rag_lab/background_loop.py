"""An event loop running in a daemon thread of its own, for sync code that runs coroutines.

Why not ``asyncio.run`` per call: async SDK clients (openai's httpx pool) bind to the loop they first
ran on, and the next ``asyncio.run`` gives them a new one (a dead pooled connection, "Event loop is
closed"). Why a thread: sync code must also work where a loop is already running (Jupyter), where
``asyncio.run`` refuses. The agent's turns and the scorer's metrics each use one.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """``run(coro)`` runs ``coro`` on this loop (started on first use, restarted if its thread died)."""

    def __init__(self, name: str, *, owner: str = "this", hint: str = "await the coroutine instead") -> None:
        self.name = name
        self.owner, self.hint = owner, hint  # said when a sync call comes from inside the loop (see run)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def is_current(self) -> bool:
        """Is the caller running on this loop?"""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` here and wait for it; an error while waiting (Ctrl-C, ``timeout``) cancels it.
        Refused from inside this loop: the loop would wait on itself forever."""
        if self.is_current():
            coro.close()
            raise RuntimeError(f"a sync call from inside {self.owner}'s own loop would deadlock; {self.hint}")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()
            raise
