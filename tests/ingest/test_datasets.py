"""The dataset registry: name vs path, unknown names, Q&A pairs, BEIR queries and qrels."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.splits import spread_by_source
from rag_lab.errors import DatasetError

REPO = Path(__file__).resolve().parents[2]
DATASETS = REPO / "datasets"


def test_name_resolves_under_datasets_dir():
    dataset = resolve_dataset("texas_childcare", DATASETS)
    spec = json.loads((DATASETS / "texas_childcare" / "dataset.json").read_text(encoding="utf-8"))
    assert dataset.name == "texas_childcare" and dataset.kind == "folder"
    assert dataset.root == (DATASETS / "texas_childcare").resolve()
    assert dataset.documents_dir == dataset.root / "pdfs"
    assert dataset.source_urls == spec["source_urls"]
    assert tuple(spec["sample_queries"]) == dataset.sample_queries
    assert [p.name for p in dataset.corpus_files] == sorted(p.name for p in (dataset.root / "pdfs").iterdir())


def test_path_resolves_to_the_same_dataset(tmp_path, monkeypatch):
    by_name = resolve_dataset("texas_childcare", DATASETS)
    by_path = resolve_dataset(str(DATASETS / "texas_childcare"), datasets_dir=tmp_path / "nowhere")
    assert by_path == by_name
    monkeypatch.chdir(DATASETS)  # a relative path wins over a same-named entry of datasets_dir
    assert resolve_dataset("scifact", tmp_path / "nowhere").kind == "beir"


def test_plain_folder_without_spec_is_indexed_whole(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "a.txt").write_text("hello", encoding="utf-8")
    dataset = resolve_dataset(tmp_path / "mine")
    assert (dataset.name, dataset.kind, dataset.documents_dir) == ("mine", "folder", (tmp_path / "mine").resolve())
    assert dataset.qa_file is None and dataset.source_urls == {}


def test_folder_with_corpus_jsonl_is_beir(tmp_path):
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"_id": "1", "title": "t", "text": "x"}) + "\n")
    dataset = resolve_dataset(tmp_path)
    assert dataset.kind == "beir" and dataset.corpus_file == tmp_path.resolve() / "corpus.jsonl"
    documents, _ = dataset.load_documents()
    assert [d.metadata["doc_id"] for d in documents] == ["1"]


def test_unknown_name_lists_known_datasets():
    with pytest.raises(DatasetError) as info:
        resolve_dataset("no_such_dataset", DATASETS)
    message = str(info.value)
    assert "Unknown dataset 'no_such_dataset'" in message
    known = sorted(p.name for p in DATASETS.iterdir() if p.is_dir())
    assert known and f"use one of: {', '.join(known)}" in message



@pytest.mark.parametrize("name", ["", "  ", None])
def test_an_empty_dataset_name_is_refused_not_read_as_the_working_folder(name):
    with pytest.raises(DatasetError) as refused:
        resolve_dataset(name)
    message = str(refused.value)
    assert message.startswith("The dataset name is empty" if name is not None else
                              "The dataset must be a name or a folder path, got None") and "texas_childcare" in message

def test_unknown_name_without_datasets_dir_hints_at_a_folder(tmp_path):
    with pytest.raises(DatasetError, match="pass a folder of documents"):
        resolve_dataset("nope", tmp_path / "missing")


def test_empty_folder_dataset_is_an_error(tmp_path):
    with pytest.raises(DatasetError, match="is empty") as info:
        resolve_dataset(tmp_path)
    assert ".pdf" in info.value.hint


def test_spec_pointing_at_missing_documents_folder(tmp_path):
    (tmp_path / "dataset.json").write_text(json.dumps({"kind": "folder", "documents": "pdfs"}))
    with pytest.raises(DatasetError, match="documents folder .* is missing"):
        resolve_dataset(tmp_path)


def test_texas_qa_pairs():
    dataset = resolve_dataset("texas_childcare", DATASETS)
    pairs = dataset.load_qa()
    lines = [ln for ln in dataset.qa_file.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert len(pairs) == len(lines) == 44
    assert len({p.id for p in pairs}) == 44
    assert all(p.question.strip() and p.reference_answer.strip() for p in pairs)
    pdfs = {p.name for p in dataset.documents_dir.iterdir()}
    assert {p.source_file for p in pairs} <= pdfs
    first = json.loads(lines[0])
    assert (pairs[0].id, pairs[0].question) == (first["id"], first["question"])


def test_qa_line_missing_a_field_names_the_line(tmp_path):
    (tmp_path / "a.txt").write_text("doc", encoding="utf-8")
    good = {"id": 1, "question": "q?", "reference_answer": "a"}
    (tmp_path / "qa.jsonl").write_text(json.dumps(good) + "\n" + json.dumps({"id": 2, "answer": "q"}) + "\n")
    with pytest.raises(DatasetError, match=r"qa.jsonl: line 2 has no question"):
        resolve_dataset(tmp_path).load_qa()
    (tmp_path / "qa.jsonl").write_text(json.dumps(good) + "\n\n{broken\n")
    with pytest.raises(DatasetError, match=r"line 3 is not JSON"):
        resolve_dataset(tmp_path).load_qa()


def test_dataset_without_qa_says_so(tmp_path):
    (tmp_path / "a.txt").write_text("doc", encoding="utf-8")
    with pytest.raises(DatasetError, match="has no Q&A file"):
        resolve_dataset(tmp_path).load_qa()


def test_scifact_queries_and_qrels():
    dataset = resolve_dataset("scifact", DATASETS)
    assert dataset.kind == "beir" and dataset.corpus_file.name == "corpus.jsonl.gz"
    queries = dataset.load_queries()
    assert len(queries) == 300
    raw = [json.loads(ln) for ln in dataset.queries_file.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert queries == {str(r["_id"]): r["text"] for r in raw}
    assert queries["1"] == "0-dimensional biomaterials show inductive properties."

    qrels = dataset.load_qrels()
    assert len(qrels) == 300
    assert sum(len(docs) for docs in qrels.values()) == 339
    with dataset.qrels_file.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) == 339
    row = rows[0]
    assert qrels[row["query-id"]][row["corpus-id"]] == int(row["score"])
    assert set(qrels) == set(queries)  # every test query has judgements
    assert all(isinstance(v, int) for docs in qrels.values() for v in docs.values())


def test_folder_dataset_queries_and_qrels_come_from_its_source_files():
    dataset = resolve_dataset("texas_childcare", DATASETS)
    pairs = dataset.load_qa()
    queries, qrels = dataset.load_queries(), dataset.load_qrels()
    assert list(queries) == [p.id for p in pairs] and queries[pairs[0].id] == pairs[0].question
    assert qrels[pairs[0].id] == {pairs[0].source_file: 1}
    pdfs = {p.name for p in dataset.documents_dir.iterdir()}
    assert {d for docs in qrels.values() for d in docs} <= pdfs


def test_user_qa_only_questions_and_several_sources(tmp_path):
    (tmp_path / "a.txt").write_text("doc", encoding="utf-8")
    (tmp_path / "b.txt").write_text("doc", encoding="utf-8")
    lines = [{"question": "only a question?"}, {"id": "q2", "question": "two?", "source_file": ["a.txt", "b.txt"]}]
    (tmp_path / "qa.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    dataset = resolve_dataset(tmp_path)
    first, second = dataset.load_qa()
    assert (first.id, first.reference_answer, first.source_files) == ("line-1", None, ())
    assert dataset.load_queries() == {"q2": "two?"} and dataset.load_qrels() == {"q2": {"a.txt": 1, "b.txt": 1}}
    (tmp_path / "qa.jsonl").write_text(json.dumps(lines[0]) + "\n")
    with pytest.raises(DatasetError, match="no line names a source_file"):
        resolve_dataset(tmp_path).load_queries()


def test_folder_without_questions_has_no_queries(tmp_path):
    (tmp_path / "a.txt").write_text("doc", encoding="utf-8")
    with pytest.raises(DatasetError, match="has no queries"):
        resolve_dataset(tmp_path).load_queries()


def test_texas_childcare_full_is_vendored_with_answerable_pairs():
    dataset = resolve_dataset("texas_childcare_full", DATASETS)
    assert dataset.kind == "folder" and len(dataset.corpus_files) == 41
    assert all(p.stat().st_size < 20 * 1024 * 1024 for p in dataset.corpus_files)
    pairs = dataset.load_qa()
    assert len(pairs) == 236 and len({p.id for p in pairs}) == 236
    names = {p.name for p in dataset.corpus_files}
    sources = {p.source_file for p in pairs}
    assert len(sources) == 23 and sources <= names  # every pair points at a vendored PDF
    qrels = dataset.load_qrels()
    assert set(qrels) == {p.id for p in pairs} and all(v == {p.source_file: 1} for p in pairs for v in [qrels[p.id]])
    assert (dataset.root / "PROVENANCE.md").is_file()


def test_limit_spreads_over_source_documents_and_extends():
    ids = ["a1", "a2", "a3", "b1", "b2", "c1", "q"]
    sources = {"a1": ["a.pdf"], "a2": ["a.pdf"], "a3": ["a.pdf"], "b1": ["b.pdf"], "b2": ["b.pdf"],
               "c1": ["c.pdf"], "q": []}
    assert spread_by_source(ids, sources, 4) == ["a1", "b1", "c1", "q"]
    assert spread_by_source(ids, sources, 6) == ["a1", "b1", "c1", "q", "a2", "b2"]
    assert spread_by_source(ids, sources, 100) == ["a1", "b1", "c1", "q", "a2", "b2", "a3"]
    with pytest.raises(ValueError, match="limit"):
        spread_by_source(ids, sources, 0)


def test_limited_texas_full_questions_cover_many_source_files():
    dataset = resolve_dataset("texas_childcare_full", DATASETS)
    queries, qrels = dataset.judged_queries(20)
    assert len(queries) == 20
    first_sources = {sorted(qrels[q])[0] for q in queries}
    assert len(first_sources) == 20  # 23 source PDFs: one question each, not 20 about the first PDF
    bigger, _ = dataset.judged_queries(40)
    assert list(bigger)[:20] == list(queries)


def test_a_folder_indexed_whole_never_takes_its_own_files_for_documents(tmp_path):
    (tmp_path / "guide.txt").write_text("The limit is $4,106.")
    (tmp_path / "qa.jsonl").write_text(json.dumps({"id": "q1", "question": "Limit?", "source_file": "guide.txt"}) + "\n")
    (tmp_path / "dev_split.txt").write_text("q1\n")
    (tmp_path / "dataset.json").write_text(json.dumps({"qa": "qa.jsonl"}))
    dataset = resolve_dataset(tmp_path)
    assert [p.name for p in dataset.corpus_files] == ["guide.txt"]
    documents, _ = dataset.load_documents()
    assert {d.metadata["filename"] for d in documents} == {"guide.txt"}
    assert dataset.dev_split == {"q1"}
