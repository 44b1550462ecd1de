"""The chunk-level measurements: chunk_hit@5 (a relevant document among the first five *chunks*),
judged@10 (share of the top-10 documents with a judgement) and ``--split dev|rest|all`` — exact
values on a worked case, and the real CLI on a small folder dataset with a real index."""

from __future__ import annotations

import json

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.errors import DatasetError
from rag_lab.evaluate.retrieval import ir
from rag_lab.splits import select_split
from tests.builders import write_folder_dataset

# -- worked case --------------------------------------------------------------------------------------

# q1: one long document owns the first five chunks; the relevant "b" comes sixth. Folded to documents,
# "b" is the 2nd document, so ranx's document-level hit_rate@5 says 1 — chunk_hit@5 says 0.
CHUNKS = {"q1": ["a", "a", "a", "a", "a", "b", "c"], "q2": ["x", "b", "x"], "q3": []}
QRELS = {"q1": {"b": 1}, "q2": {"b": 1}, "q3": {"z": 1}}


def test_chunk_hit_counts_chunks_not_documents():
    hits = ir.chunk_hits(CHUNKS, QRELS)
    assert hits == {"q1": 0.0, "q2": 1.0, "q3": 0.0}
    assert ir.chunk_hits(CHUNKS, QRELS, k=6)["q1"] == 1.0  # the 6th chunk is b's
    # ranx on the same lists folded to documents: q1 hits at document level (b is 2nd of a, b, c)
    from ranx import Qrels, Run, evaluate

    from rag_lab.evaluate.retrieval.ranx_ids import fixed_width_ids

    folded = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 2.0, "b": 1.0}}
    # the ids as rag-lab passes them to ranx: its kernels compiled by the set-up's warm-up, not again here
    run, qrels = fixed_width_ids(folded, {q: QRELS[q] for q in folded})
    ranx_hits = evaluate(Qrels(qrels), Run(run), "hit_rate@5", return_mean=False)
    assert list(ranx_hits) == [1.0, 1.0]


def test_chunk_hit_ignores_grade_zero_and_unjudged_queries():
    assert ir.chunk_hits({"q": ["a"], "other": ["a"]}, {"q": {"a": 0}}) == {"q": 0.0}


def test_judged_share_of_the_top_ten_documents():
    qrels = {"q1": {"b": 1, "c": 0}, "q2": {f"d{i}": 1 for i in (0, 4, 10)}, "q3": {"z": 1}}
    run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7},  # b and c judged (c as not relevant): 2 of 3 shown
           "q2": {f"d{i}": 20.0 - i for i in range(12)},  # d0 and d4 in the top 10, d10 is 11th: 2/10
           "q3": {}}  # nothing retrieved
    assert ir.judged_shares(run, qrels) == {"q1": pytest.approx(2 / 3), "q2": pytest.approx(0.2), "q3": 0.0}


def test_ranked_documents_break_ties_in_retrieval_order():
    assert ir.ranked_documents({"b": 1.0, "a": 2.0, "c": 1.0}) == ["a", "b", "c"]


def test_select_split_keeps_order_and_refuses_a_missing_split():
    ids = ["q3", "q1", "q2"]
    dev = frozenset({"q1", "q3"})
    assert select_split(ids, dev, "dev") == ["q3", "q1"]
    assert select_split(ids, dev, "rest") == ["q2"]
    assert select_split(ids, dev, "all") == ids
    assert select_split(ids, frozenset(), "all") == ids
    with pytest.raises(DatasetError, match="declares no dev split"):
        select_split(ids, frozenset(), "dev", "pets")
    with pytest.raises(DatasetError, match="unknown split"):
        select_split(ids, dev, "train")


# -- the real CLI on a small folder dataset -------------------------------------------------------------

DOCS = {
    "cats.txt": "Cats purr when content. A house cat sleeps sixteen hours a day.",
    "dogs.txt": "Dogs bark at strangers. A puppy needs three walks a day.",
    "birds.txt": "Parrots can mimic speech. A budgie lives about seven years.",
}
QA = [{"id": "cats", "question": "How many hours does a house cat sleep?", "reference_answer": "sixteen",
       "source_file": "cats.txt"},
      {"id": "dogs", "question": "How many walks a day does a puppy need?", "reference_answer": "three",
       "source_file": "dogs.txt"},
      {"id": "birds", "question": "How long does a budgie live?", "reference_answer": "seven years",
       "source_file": "birds.txt"}]


def _folder(root, dev: list[str] | None):
    return write_folder_dataset(root, DOCS, QA, dev=dev)


@pytest.fixture(scope="module")
def pets_split(tmp_path_factory, lab_settings):
    from rag_lab.index import build_index

    root = _folder(tmp_path_factory.mktemp("pets_split") / "pets", dev=["dogs", "cats"])
    build_index(resolve_dataset(root), lab_settings, progress=False)
    return root


def test_ir_cli_reports_chunk_hit_and_judged_per_split(pets_split, lab_cli, lab_settings, tmp_path):
    from rag_lab.report.html import build_report

    code, out, err = lab_cli("ir", str(pets_split), "--modes", "bm25,fusion", "--split", "dev",
                             "--json", str(tmp_path / "dev.json"), "--out", str(tmp_path / "run"))
    assert code == 0, err
    assert "chunk_hit@5" in out and "judged@10" in out and "of the dev split" in out
    data = json.loads((tmp_path / "dev.json").read_text())
    assert data["queries"]["split"] == "dev" and sorted(data["queries"]["ids"]) == ["cats", "dogs"]
    for mode in ("bm25", "fusion"):
        # each question's own document ranks first on this easy corpus: a chunk hit; the other
        # documents retrieved have no judgement for the question → judged@10 = 1 / documents retrieved
        assert data["per_query"][mode]["chunk_hit@5"] == {"cats": 1.0, "dogs": 1.0}
        assert data["results"][mode]["chunk_hit@5"] == 1.0
        dataset = resolve_dataset(pets_split)
        queries = {q: t for q, t in dataset.judged_queries(split="dev")[0].items()}
        run = ir.run_mode(mode, dataset, lab_settings, queries, progress=False).run  # from the checkpoint
        for qid, share in data["per_query"][mode]["judged@10"].items():
            assert share == pytest.approx(1 / min(10, len(run[qid]))), (mode, qid, run[qid])
    assert "chunk_hit@5" in data["metric_definitions"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["split"] == "dev"
    page = build_report(tmp_path / "run")
    assert "chunk_hit@5" in page and "judged@10" in page
    # two questions: the mean is shown, no interval (none is drawn below MIN_INTERVAL_N samples)
    judged = f"{data['results']['bm25']['judged@10']:.3f}"
    assert judged in page and f"{judged} [" not in page

    code, out, err = lab_cli("ir", str(pets_split), "--modes", "bm25", "--split", "rest",
                             "--json", str(tmp_path / "rest.json"))
    assert code == 0, err
    assert json.loads((tmp_path / "rest.json").read_text())["queries"]["ids"] == ["birds"]


def test_split_without_a_dev_split_file_is_a_clear_error(tmp_path, lab_cli, lab_settings):
    from rag_lab.index.paths import IndexPaths

    root = _folder(tmp_path / "nosplit", dev=None)
    index_dir = IndexPaths.for_dataset(lab_settings, resolve_dataset(root)).root
    for command in (["ir", str(root), "--modes", "bm25"], ["ablate", str(root), "--answer-configs", "none"]):
        code, out, err = lab_cli(*command, "--split", "dev")
        assert code != 0
        assert "declares no dev split" in err and "rag-lab split" in err, err
        assert not index_dir.exists(), command  # refused before any index build (where the CLI builds it)


def test_ablate_cli_runs_on_the_dev_split_only(pets_split, lab_cli, tmp_path):
    code, out, err = lab_cli("ablate", str(pets_split), "--modes", "fusion", "--fusion-k", "60", "--prefetch", "10",
                             "--top-k", "5", "--answer-configs", "none", "--split", "rest", "--out", str(tmp_path / "a"))
    assert code == 0, err
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["split"] == "rest" and manifest["n_queries"] == 1
    assert "questions of the rest split" in out
