"""One long-lived event loop, in a daemon thread (:class:`BackgroundLoop`), on which every agent
turn runs. Context variables (``track_usage`` blocks) follow the coroutine: the
scheduling callback captures the caller's context and the task is created inside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from rag_lab.background_loop import BackgroundLoop

T = TypeVar("T")

_background = BackgroundLoop("rag-lab-agent-loop", owner="the agent", hint="use `await achat()`")


def agent_loop() -> asyncio.AbstractEventLoop:
    """The shared agent loop, started on first use."""
    return _background.loop


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the agent loop and wait for it (works with or without a running loop).

    ``timeout`` is a backstop for a loop blocked by a sync call (in-loop timeouts cannot fire
    then): the turn is cancelled and ``TimeoutError`` raised.
    """
    return _background.run(coro, timeout)  # Ctrl-C (or any error here) stops the turn instead of leaving it running


async def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the agent loop from any loop."""
    if _background.is_current():
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, agent_loop()))
