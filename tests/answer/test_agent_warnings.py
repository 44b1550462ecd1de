"""Building our FunctionAgent emits no warning (the workflow's step discovery used to read
pydantic's deprecated instance attributes: four PydanticDeprecated warnings per agent)."""

from __future__ import annotations

import warnings

from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool

from rag_lab.answer.agent import CappedFunctionAgent


def lookup(query: str) -> str:
    """Look something up."""
    return query


def test_building_the_agent_warns_nothing():
    tool = FunctionTool.from_defaults(fn=lookup)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = CappedFunctionAgent(name="a", tools=[tool], llm=MockFunctionCallingLLM(), system_prompt="s")
    assert [str(w.message) for w in caught] == []
    assert "run_agent_step" in agent._get_steps()  # steps are still found
