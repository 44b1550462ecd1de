"""A sync call into a BackgroundLoop from a coroutine already running on it would wait on itself
forever; every owner of such a loop (the agent, the scorer) gets a clear error instead of a hang."""

from __future__ import annotations

import pytest

from rag_lab.answer import agent_runtime
from rag_lab.background_loop import BackgroundLoop


async def _answer() -> int:
    return 42


def test_run_from_outside_the_loop_returns_the_result():
    loop = BackgroundLoop("test-loop")
    assert loop.run(_answer(), timeout=10) == 42
    assert not loop.is_current()


def test_a_sync_call_from_inside_the_loop_is_refused_not_a_hang():
    loop = BackgroundLoop("test-loop", owner="the tester", hint="await it")

    async def reenter() -> int:
        return loop.run(_answer())  # sync, from a coroutine on the same loop

    # before: only the agent's wrapper checked; here the inner call waited forever and the outer
    # one ran into its timeout
    with pytest.raises(RuntimeError, match="from inside the tester's own loop would deadlock; await it"):
        loop.run(reenter(), timeout=10)


def test_the_agent_and_the_scorer_say_what_to_do_instead(lab_settings):
    from rag_lab.evaluate.run.scorer import Scorer

    async def agent_turn() -> int:
        return agent_runtime.run_sync(_answer())

    with pytest.raises(RuntimeError, match=r"agent's own loop would deadlock; use `await achat\(\)`"):
        agent_runtime.run_sync(agent_turn(), timeout=10)

    scorer = Scorer(lab_settings, metrics=["rouge_l"])

    async def metric() -> int:
        return scorer._await(_answer())

    with pytest.raises(RuntimeError, match="scorer's own loop would deadlock; await the metric"):
        scorer._loop.run(metric(), timeout=10)
