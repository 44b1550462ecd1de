"""A retriever is its module plus one registry line: a toy one, registered here, is built by
``build_retriever``, offered by the CLI and passes the whole contract (alone and behind the agent's tool)."""

from __future__ import annotations

import inspect
import sys
import types

import pytest
from llama_index.core.schema import NodeWithScore
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from rag_lab.retrieve.base import LabRetriever
from rag_lab.retrieve.registry import RETRIEVERS, RetrieverEntry, build_retriever
from tests.contracts import test_retriever_contract as contract
from tests.contracts.conftest import contract_subjects, subject_maker


class ToyRetriever(LabRetriever):
    """Chunks ranked by how many of the query's words they contain (ties: corpus order)."""

    mode_name = "toy"

    def __init__(self, index, top_k: int = 10, **kwargs) -> None:
        self.nodes = [metadata_dict_to_node(payload) for payload in index.bm25.corpus]
        super().__init__(top_k=top_k, **kwargs)

    def _search(self, query: str, top_k: int) -> list[NodeWithScore]:
        words = set(query.lower().split())
        scored = [(len(words & set(node.get_content().lower().split())), i) for i, node in enumerate(self.nodes)]
        ranked = sorted((pair for pair in scored if pair[0]), key=lambda pair: (-pair[0], pair[1]))[:top_k]
        return [NodeWithScore(node=self.nodes[i], score=float(score)) for score, i in ranked]


@pytest.fixture
def toy_registered(monkeypatch):
    """The toy's module, importable, and its one registry line."""
    module = types.ModuleType("toy_retrievers")
    module.ToyRetriever = ToyRetriever
    monkeypatch.setitem(sys.modules, "toy_retrievers", module)
    monkeypatch.setitem(RETRIEVERS, "toy", RetrieverEntry("toy", "toy_retrievers:ToyRetriever", "word overlap"))


def contract_cases():
    """Every test of the contract module with each of its parametrised argument sets."""
    for name, test in vars(contract).items():
        if not name.startswith("test_") or not callable(test):
            continue
        cases = [{}]
        for mark in getattr(test, "pytestmark", []):
            if mark.name == "parametrize":
                names = [n.strip() for n in mark.args[0].split(",")]
                cases = [{**case, **dict(zip(names, value if len(names) > 1 else (value,)))}
                         for case in cases for value in mark.args[1]]
        for case in cases:
            yield name, test, case


def test_the_contract_suite_picks_up_a_registered_retriever_and_it_passes(toy_registered, texas_index, lab_settings):
    toys = [s for s in contract_subjects() if s.mode == "toy"]
    assert [s.name for s in toys] == ["toy", "agent-tool(toy)"]  # not fused: no wrappers; no explain parameter
    ran = 0
    for subject in toys:
        make = subject_maker(subject, texas_index, lab_settings)
        for name, test, case in contract_cases():
            fixtures = {"make_retriever": make, "texas_index": texas_index, **case}
            test(**{p: fixtures[p] for p in inspect.signature(test).parameters})
            ran += 1
    assert ran >= 2 * 15  # every contract test, each parametrised case, on both subjects


def test_build_retriever_and_the_cli_offer_a_registered_retriever(toy_registered, texas_index, lab_settings, lab_cli,
                                                                  capsys):
    retriever = build_retriever("toy", lab_settings, "texas_childcare", top_k=2)
    assert isinstance(retriever, ToyRetriever) and len(retriever.retrieve("parent share of cost")) == 2

    code, out, err = lab_cli("search", "texas_childcare", "parent share of cost", "--mode", "toy", "--top-k", "2")
    assert code == 0, err
    assert "toy" in out and out.count("[") >= 2
    with pytest.raises(SystemExit):
        lab_cli("search", "--help")
    assert "toy (word overlap)" in " ".join(capsys.readouterr().out.split())


def test_an_unregistered_mode_is_refused_with_the_registered_ones(lab_settings, lab_cli, capsys):
    from rag_lab.errors import ConfigError

    with pytest.raises(ConfigError, match="Unknown retrieval mode 'toy'") as caught:
        build_retriever("toy", lab_settings, "texas_childcare")
    assert "dense, bm25, fusion, hybrid, kendra" in str(caught.value.hint)
    with pytest.raises(SystemExit) as exited:
        lab_cli("search", "texas_childcare", "q", "--mode", "toy")
    assert exited.value.code == 2 and "invalid choice: 'toy'" in capsys.readouterr().err


def test_every_mode_list_reads_the_registry(toy_registered):
    from rag_lab.cli.ask import ask_modes
    from rag_lab.evaluate.run.runner import eval_modes
    from rag_lab.retrieve import index_modes, retrieval_modes

    assert retrieval_modes() == ("dense", "bm25", "fusion", "hybrid", "kendra", "toy")
    assert index_modes() == ("dense", "bm25", "fusion", "hybrid", "toy")  # Kendra indexes its documents itself
    assert eval_modes() == ask_modes() == (*retrieval_modes(), "agent")


def test_a_service_mode_has_no_contextual_variant(lab_settings):
    from rag_lab.errors import ConfigError

    with pytest.raises(ConfigError, match="Kendra indexes its documents itself: there is no contextual Kendra "
                                          "variant") as caught:
        build_retriever("kendra", lab_settings, contextual="llm")
    assert caught.value.hint == "use --contextual with dense, bm25, fusion or hybrid"
