"""At most M chunks per document in the fused top-k — the cap on a worked
case, in the ablation grid, and in the real fusion/hybrid retrievers (and their --explain)."""

from __future__ import annotations

import json

import pytest

from rag_lab.evaluate.ablation.grid import Candidates, GridSpec, compute_grid
from rag_lab.retrieve.diversity import cap_per_document
from tests.builders import write_folder_dataset

DOC = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "x1": "X"}


def test_cap_keeps_at_most_m_per_document_and_refills_from_below():
    ranked = ["a1", "a2", "a3", "b1", "x1"]
    kept, skipped = cap_per_document(ranked, DOC.__getitem__, 1, top_k=3)
    assert kept == [(1, "a1"), (4, "b1"), (5, "x1")]  # a2, a3 skipped; b1 and x1 fill the top-3
    assert skipped == [(2, "a2"), (3, "a3")]
    kept, skipped = cap_per_document(ranked, DOC.__getitem__, 2, top_k=3)
    assert kept == [(1, "a1"), (2, "a2"), (4, "b1")] and skipped == [(3, "a3")]
    kept, skipped = cap_per_document(ranked, DOC.__getitem__, 0, top_k=3)  # 0 = off
    assert [c for _, c in kept] == ["a1", "a2", "a3"] and skipped == []
    kept, _ = cap_per_document(ranked, DOC.__getitem__, 1, top_k=10)  # fewer candidates than top-k
    assert [c for _, c in kept] == ["a1", "b1", "x1"]
    with pytest.raises(ValueError, match="≥ 0"):
        cap_per_document(ranked, DOC.__getitem__, -1)


def test_grid_caps_the_whole_fused_list_before_the_cut():
    # fused (k=60, prefetch 5): a1 (both legs, rank 1), a2 (both, rank 2), then a3 (dense 3) vs b1
    # (dense 4 + bm25 3: two terms) → b1, a3, x1
    q = Candidates("q", {"dense": [("a1", "A", 0.9), ("a2", "A", 0.8), ("a3", "A", 0.75), ("b1", "B", 0.7),
                                   ("x1", "X", 0.6)],
                         "bm25": [("a1", "A", 5.0), ("a2", "A", 4.0), ("b1", "B", 3.0)]})
    grid = compute_grid([q], GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(5,), top_k=(2, 3),
                                      max_per_doc=(0, 1, 2)))
    base = "fusion|k=60|p=5|w=1:1"
    assert grid.chunks[f"{base}|top=3"]["q"] == ("a1", "a2", "b1")
    assert grid.chunks[f"{base}|top=3|cap=1"]["q"] == ("a1", "b1", "x1")
    assert grid.docs[f"{base}|top=3|cap=1"]["q"] == ("A", "B", "X")
    assert grid.chunks[f"{base}|top=2|cap=1"]["q"] == ("a1", "b1")
    assert grid.chunks[f"{base}|top=3|cap=2"]["q"] == ("a1", "a2", "b1")
    assert {c.max_per_doc for c in grid.configs} == {0, 1, 2}
    with pytest.raises(ValueError, match="max_per_doc"):
        GridSpec(max_per_doc=(-1,))


def test_cap_is_its_own_significance_family():
    from rag_lab.evaluate.ablation.grid import Config
    from rag_lab.evaluate.ablation.significance import comparison_for, family_name

    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(100,), top_k=(5,), max_per_doc=(0, 2))
    capped = Config("fusion", 60, 100, 1.0, 1.0, 5, 2)
    assert comparison_for(capped, spec) == ("max_per_doc", "fusion|k=60|p=100|w=1:1|top=5")
    assert family_name("max_per_doc", "fusion", 5, "recall@top_k") == "max_per_doc | fusion | top-5 | recall@top_k"


# -- the real retrievers on a folder dataset where one long document has many chunks ------------------

LONG = " ".join(f"Rule {i}: a house cat in a licensed child care home must be kept away from infants, "
                f"and the cat's vaccination record is checked at each inspection visit number {i}."
                for i in range(120))  # ~3,000 words → several 500-word chunks of one document
DOCS = {"cat-rules.txt": LONG,
        "cat-sleep.txt": "A house cat sleeps sixteen hours a day in a child care home.",
        "dogs.txt": "A puppy needs three walks a day."}
QA = [{"id": "q1", "question": "house cat child care home infants vaccination", "reference_answer": "x",
       "source_file": "cat-sleep.txt"}]


@pytest.fixture(scope="module")
def long_doc(tmp_path_factory, lab_settings):
    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import build_index

    root = write_folder_dataset(tmp_path_factory.mktemp("diversity") / "cats", DOCS, QA)
    dataset = resolve_dataset(root)
    manifest = build_index(dataset, lab_settings, progress=False).manifest
    assert manifest.n_chunks >= 6  # the long document really has many chunks
    return dataset


@pytest.mark.parametrize("mode", ["fusion", "hybrid"])
@pytest.mark.parametrize("explain", [False, True])
def test_fused_modes_cap_chunks_per_document(long_doc, lab_settings, mode, explain):
    from rag_lab.retrieve import build_retriever
    from rag_lab.retrieve.records import doc_key

    query = QA[0]["question"]
    uncapped = build_retriever(mode, lab_settings, long_doc, top_k=50, explain=explain).retrieve(query)
    docs = [doc_key(r.node.metadata) for r in uncapped]
    assert docs[:3] == ["cat-rules.txt"] * 3  # the long document crowds the top
    capped = build_retriever(mode, lab_settings, long_doc, top_k=3, max_per_doc=1, explain=explain).retrieve(query)
    # the same fused list, capped: one chunk per document, the next-best chunks filling the top-3
    expected = [r.node.node_id for _, r in cap_per_document(uncapped, lambda r: doc_key(r.node.metadata), 1, 3)[0]]
    assert [r.node.node_id for r in capped] == expected
    assert sorted(doc_key(r.node.metadata) for r in capped) == ["cat-rules.txt", "cat-sleep.txt", "dogs.txt"]
    if explain:
        first, second = (r.node.metadata["explanation"] for r in capped[:2])
        assert first["fused_rank"] == 1 and first["skipped_by_cap"] == []
        skipped_ranks = [s["fused_rank"] for s in second["skipped_by_cap"]]
        assert skipped_ranks == list(range(2, second["fused_rank"]))  # every rank between the two kept
        assert {s["document"] for s in second["skipped_by_cap"]} == {"cat-rules.txt"}


def test_search_explain_says_what_the_cap_skipped(long_doc, lab_cli, capsys):
    code, out, err = lab_cli("search", str(long_doc.root), QA[0]["question"], "--mode", "fusion", "--top-k", "3",
                             "--max-per-doc", "1", "--explain")
    assert code == 0, err
    assert "skipped above it by the cap (max 1 chunks per document): rank 2 (cat-rules.txt)" in out
    from rag_lab.cli.main import main

    with pytest.raises(SystemExit) as exit_info:  # refused by the argument parser, before any work
        main(["search", str(long_doc.root), "cat", "--max-per-doc", "-1"])
    assert exit_info.value.code == 2
    assert "argument --max-per-doc: expected a whole number ≥ 0 (0 = no cap), got '-1'" in capsys.readouterr().err


def test_ir_and_ablate_take_the_cap(long_doc, lab_cli, tmp_path):
    code, out, err = lab_cli("ir", str(long_doc.root), "--modes", "fusion", "--max-per-doc", "1",
                             "--json", str(tmp_path / "ir.json"))
    assert code == 0, err
    data = json.loads((tmp_path / "ir.json").read_text())
    assert data["params"]["max_per_doc"] == 1 and "at most 1 chunks per document" in out
    assert data["per_query"]["fusion"]["chunk_hit@5"] == {"q1": 1.0}
    code, out, err = lab_cli("ablate", str(long_doc.root), "--modes", "fusion", "--fusion-k", "60", "--prefetch", "10",
                             "--top-k", "3", "--max-per-doc", "0,1", "--answer-configs", "none",
                             "--out", str(tmp_path / "a"))
    assert code == 0, err
    import pandas as pd

    results = pd.read_csv(tmp_path / "a" / "results.csv")
    capped = results[results["config"] == "fusion|k=60|p=10|w=1:1|top=3|cap=1"]
    assert set(capped["family_axis"]) == {"max_per_doc"} and (capped["max_per_doc"] == 1).all()
    recall = dict(zip(results[results["metric"] == "recall@top_k"]["config"],
                      results[results["metric"] == "recall@top_k"]["mean"]))
    assert recall["fusion|k=60|p=10|w=1:1|top=3|cap=1"] == 1.0


def test_an_answer_configuration_below_the_grid_top_k_keeps_its_cap():
    from rag_lab.evaluate.ablation.answers import _chunks_for
    from rag_lab.evaluate.ablation.grid import Config

    q = Candidates("q", {"dense": [("a1", "A", 0.9), ("a2", "A", 0.8), ("b1", "B", 0.7)],
                         "bm25": [("a1", "A", 5.0), ("a2", "A", 4.0), ("b1", "B", 3.0)]})
    grid = compute_grid([q], GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(3,), top_k=(3,),
                                      max_per_doc=(0, 1)))
    assert _chunks_for(grid, Config("fusion", 60, 3, 1.0, 1.0, 2, 1), "q") == ("a1", "b1")  # not a1, a2
    assert _chunks_for(grid, Config("fusion", 60, 3, 1.0, 1.0, 2), "q") == ("a1", "a2")


@pytest.mark.parametrize("caps", [(1,), (0, 1)])
def test_the_spot_check_runs_the_live_retriever_with_the_cap(long_doc, lab_settings, tmp_path, caps):
    """A grid whose caps leave out 0 has no uncapped ranking to compare with (before: KeyError after the
    whole grid was computed); each cap is checked against the live retriever applying it."""
    from rag_lab.evaluate.ablation import run_ablation

    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(5, 10), top_k=(3,), max_per_doc=caps,
                    default_prefetch=10)
    check = run_ablation(long_doc, lab_settings, spec, tmp_path / "a", progress=False).manifest["spot_check"]
    capped = [c for c in check["checks"] if c["config"].endswith("|cap=1")]
    assert check["equal"] and capped
    # the baseline cap at every prefetch; another cap at the largest prefetch
    assert {c["prefetch"] for c in capped} == ({10} if 0 in caps else {5, 10})
    assert {c["prefetch"] for c in check["checks"]} == {5, 10}
    if 0 in caps:  # the live retriever really capped: its list is not the uncapped one (the long document crowds that)
        live = {c["config"]: c["live"] for c in check["checks"] if c["prefetch"] == 10}
        assert live["fusion|k=60|p=10|w=1:1|top=3|cap=1"] != live["fusion|k=60|p=10|w=1:1|top=3"]
