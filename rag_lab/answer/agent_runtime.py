"""One long-lived event loop, in a daemon thread, on which every agent turn runs.

Why not ``asyncio.run`` per turn: async SDK clients (openai's httpx pool) bind to the loop they
first ran on, and a second ``asyncio.run`` gives them a new one ("Event loop is closed"). Why a
thread: a sync ``chat()`` must also work where a loop is already running (Jupyter), where
``asyncio.run`` refuses. Context variables (``track_usage`` blocks) follow the coroutine: the
scheduling callback captures the caller's context and the task is created inside it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def agent_loop() -> asyncio.AbstractEventLoop:
    """The shared agent loop, started on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="rag-lab-agent-loop", daemon=True)
            thread.start()
            _loop, _thread = loop, thread
        return _loop


def _on_agent_loop() -> bool:
    try:
        return asyncio.get_running_loop() is _loop
    except RuntimeError:
        return False


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the agent loop and wait for it (works with or without a running loop).

    ``timeout`` is a backstop for a loop blocked by a sync call (in-loop timeouts cannot fire
    then): the turn is cancelled and ``TimeoutError`` raised.
    """
    if _on_agent_loop():
        coro.close()
        raise RuntimeError("a sync agent call from inside the agent's own loop would deadlock; use `await achat()`")
    future = asyncio.run_coroutine_threadsafe(coro, agent_loop())
    try:
        return future.result(timeout)
    except BaseException:
        future.cancel()  # Ctrl-C (or any error here) stops the turn instead of leaving it running
        raise


async def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the agent loop from any loop."""
    if _on_agent_loop():
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, agent_loop()))
