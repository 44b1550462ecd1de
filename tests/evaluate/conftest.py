"""Evaluation fixtures: a scripted generator that cites the chunk it quotes (deterministic)."""

from __future__ import annotations

import re

import pytest

from tests.answer.conftest import ScriptedLLM

_DOC = re.compile(r"\[Doc (\d+):[^\]]*\]\n(.*?)(?=\n\n\[Doc \d+:|\n\nQuestion:)", re.S)


def quoting_answer(prompt: str) -> str:
    """The first line with a dollar amount of the first chunk that has one, cited as that chunk."""
    if "relevance score" in prompt:
        return "Doc: 1, Relevance: 5"
    for number, text in _DOC.findall(prompt):
        for line in text.splitlines():
            if "$" in line:
                return f"{line.strip()} [Doc {number}]"
    return "I couldn't find information about that"


@pytest.fixture
def quoting_llm():
    return ScriptedLLM(script=quoting_answer)
