"""The retriever contract's subjects, read from the retriever registry: every test in this folder
runs on each.

:func:`contract_subjects` lists, for every mode in :data:`rag_lab.retrieve.registry.RETRIEVERS`,
the retriever ``build_retriever`` makes; for a mode whose class takes ``explain``, that variant;
for every fused mode, its LLM-rewrite and year-boost wrappers; and for every mode, the agent's
``retrieve_context`` tool over it (:class:`ToolAsRetriever`). A mode added to the registry is
picked up with no line here.

A subject is made with ``top_k`` and ``no_match``: ``no_match=True`` asks for one configured so
that :data:`NO_MATCH_QUERY` matches nothing (a gibberish query, plus a score threshold for the
dense leg, whose cosine always finds *something*; modes that take no threshold ignore it).
Service modes (Kendra) get their real SDK client with the HTTP layer stubbed (:data:`SERVICE_STUBS`).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

NO_MATCH_QUERY = "zqxjv wkpfy qqzzx"
NO_MATCH_THRESHOLD = 0.95  # cosine; no chunk is this close to gibberish
SHALLOW_PREFETCH = 20  # texas_childcare has 15 chunks: every leg still sees them all
AGENT_TOOL = "agent-tool"


def scripted_rewrites(prompt: str) -> str:
    """Two rewrites of the prompt's query, both made of its own words (a gibberish query stays gibberish)."""
    query = re.search(r"Query: (.*)\n", prompt).group(1)
    words = query.split()
    return f"{' '.join(reversed(words))}\n{query.lower()}"


def _kendra_client(settings_update: dict[str, Any]) -> dict[str, Any]:
    from tests.retrieve.kendra_stub import STUB_INDEX_ID, STUB_REGION, KendraStub

    settings_update.update(kendra_index_id=STUB_INDEX_ID, kendra_region=STUB_REGION)
    return {"client": KendraStub({NO_MATCH_QUERY: []}).client()}


#: service → ``(settings update to fill in) -> build_retriever parameters``: the service's real SDK
#: client, its HTTP layer answered by a stub of the service.
SERVICE_STUBS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"Kendra": _kendra_client}


@dataclass(frozen=True)
class Subject:
    """One retriever the contract runs on: ``build_retriever(mode, **params)``, seen through the
    agent's tool when ``through`` is :data:`AGENT_TOOL`."""

    name: str
    mode: str
    params: dict[str, Any] = field(default_factory=dict)
    through: str | None = None


def contract_subjects() -> list[Subject]:
    """Every subject the registry implies (module doc), in the registry's order."""
    from rag_lab.retrieve.registry import RETRIEVERS

    subjects = []
    for mode, entry in RETRIEVERS.items():
        subjects.append(Subject(mode, mode))
        if "explain" in inspect.signature(entry.load()).parameters:
            subjects.append(Subject(f"{mode}-explain", mode, {"explain": True}))
        if entry.fused:
            subjects.append(Subject(f"{mode}+rewrites", mode, {"num_queries": 3}))
            subjects.append(Subject(f"{mode}+year-boost", mode, {"year_boost": 0.5}))
        subjects.append(Subject(f"{AGENT_TOOL}({mode})", mode, through=AGENT_TOOL))
    return subjects


class ToolAsRetriever(BaseRetriever):
    """The agent's ``retrieve_context`` tool seen as a retriever: each query is a new turn whose
    user question is the query, the model's call passes ``query`` and ``top_k``, and the results
    are the chunks the tool showed (``[Doc N]``, in its order). The tool clamps ``top_k`` to 1..20
    and searches the question when the model's query is unusable, so an empty query reaches the
    retriever below it."""

    def __init__(self, tool, top_k: int) -> None:
        self.tool, self.top_k = tool, top_k
        super().__init__()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        turn = self.tool.start_turn(query_bundle.query_str)
        text = self.tool(query=query_bundle.query_str, top_k=self.top_k)
        shown = turn.calls[-1].numbers
        assert all(f"[Doc {n}:" in text for n in shown), text  # what the model reads names each chunk
        return [turn.nodes[n - 1] for n in shown]


def subject_maker(subject: Subject, index, settings) -> Callable[..., BaseRetriever]:
    """``make(top_k=5, no_match=False)`` → the subject, built through the registry."""
    from rag_lab.retrieve.registry import build_retriever, registry_entry

    entry = registry_entry(subject.mode)

    def make(top_k: int = 5, no_match: bool = False) -> BaseRetriever:
        params = {"score_threshold": NO_MATCH_THRESHOLD if no_match else None, "prefetch": SHALLOW_PREFETCH,
                  **subject.params}
        if "num_queries" in params:
            from tests.answer.conftest import ScriptedLLM

            params["llm"] = ScriptedLLM(script=scripted_rewrites)
        update: dict[str, Any] = {}
        if not entry.needs_index:
            params.update(SERVICE_STUBS[entry.service](update))
        lab_settings = settings.model_copy(update=update)
        if subject.through == AGENT_TOOL:
            from rag_lab.answer.agent_tool import MAX_TOP_K, RetrievalTool

            inner = build_retriever(subject.mode, lab_settings, index.name, **{**params, "top_k": MAX_TOP_K})
            return ToolAsRetriever(RetrievalTool(inner, default_top_k=top_k), top_k)
        return build_retriever(subject.mode, lab_settings, index.name, top_k=top_k, **params)

    make.mode = subject.mode
    make.subject = subject
    return make


def pytest_generate_tests(metafunc):
    if "contract_subject" in metafunc.fixturenames:
        subjects = contract_subjects()
        metafunc.parametrize("contract_subject", subjects, ids=[s.name for s in subjects])


@pytest.fixture
def make_retriever(contract_subject, texas_index, lab_settings):
    return subject_maker(contract_subject, texas_index, lab_settings)
