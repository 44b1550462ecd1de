"""Bad inputs end in ONE message naming the file (and line) and the fix; `ir` checks its queries
before indexing; a failed build is reported as such (no "build it first" loop); progress lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.test_cli import _assert_one_clean_error, cli  # noqa: F401  (fixture)


_PROGRESS = re.compile(r"^[\w ]+: \d+(/\d+)? \w+")  # rag_lab.progress's plain lines


def _manifests(data_dir: Path, name: str) -> list[Path]:
    """Manifests written for dataset ``name``, wherever the index layout puts them."""
    found = []
    for path in Path(data_dir).rglob("manifest*.json"):
        try:
            if json.loads(path.read_text()).get("dataset") == name:
                found.append(path)
        except ValueError:
            found.append(path)  # a damaged one still counts
    return found


def _beir(root: Path, queries: str | None = None, qrels: str | None = None) -> Path:
    """A three-abstract BEIR folder; ``queries``/``qrels`` replace the good files' text."""
    root.mkdir(parents=True)
    docs = [("d1", "Aspirin lowers the risk of heart attacks in adults."),
            ("d2", "Vitamin D deficiency is common in northern countries."),
            ("d3", "Regular exercise improves sleep quality.")]
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in docs))
    good_queries = "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in
                           [("7", "aspirin heart attack"), ("12", "vitamin D deficiency"), ("3", "exercise and sleep")])
    (root / "queries.jsonl").write_text(good_queries if queries is None else queries)
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n7\td1\t1\n12\td2\t1\n3\td3\t1\n" if qrels is None else qrels)
    return root


def test_malformed_dataset_json_names_file_and_line(cli, tmp_path):
    folder = tmp_path / "bad_spec"
    folder.mkdir()
    (folder / "a.txt").write_text("text")
    (folder / "dataset.json").write_text('{"kind": "folder",\n "qa": qa.jsonl}\n')
    code, out, err = cli("search", str(folder), "text", "--mode", "bm25")
    _assert_one_clean_error(code, out, err, f"{folder / 'dataset.json'}: line 2 column", "fix the dataset description")


def test_malformed_queries_line_names_file_and_line_before_indexing(cli, tmp_path, lab_settings):
    root = _beir(tmp_path / "bad_queries", queries='{"_id": "1", "text": "fine"}\n{"_id": "2", "text": \n')
    code, out, err = cli("ir", str(root), "--modes", "bm25")
    _assert_one_clean_error(code, out, err, f"{root / 'queries.jsonl'}: line 2 is not JSON", "fix or remove that line")
    assert _manifests(lab_settings.data_dir, "bad_queries") == []  # failed before building the index


def test_query_line_without_id(cli, tmp_path):
    root = _beir(tmp_path / "no_id", queries='{"text": "no id"}\n')
    code, out, err = cli("ir", str(root), "--modes", "bm25")
    _assert_one_clean_error(code, out, err, f"{root / 'queries.jsonl'}: line 1 is not a BEIR query", '"_id"')


def test_malformed_qrels_line(cli, tmp_path):
    root = _beir(tmp_path / "bad_qrels", qrels="query-id\tcorpus-id\tscore\n7\td1\t1\n12\td2\n")
    code, out, err = cli("ir", str(root), "--modes", "bm25")
    _assert_one_clean_error(code, out, err, f"{root / 'qrels' / 'test.tsv'}: line 3 is not", "fix or remove that line")
    root = _beir(tmp_path / "bad_header", qrels="q\td\ts\n7\td1\t1\n")
    code, out, err = cli("ir", str(root), "--modes", "bm25")
    _assert_one_clean_error(code, out, err, "test.tsv: line 1 (header) lacks column(s) query-id, corpus-id, score")


def test_malformed_qa_line(cli, tmp_path):
    folder = tmp_path / "bad_qa"
    folder.mkdir()
    (folder / "a.txt").write_text("text")
    (folder / "qa.jsonl").write_text('{"question": "ok?", "source_file": "a.txt"}\nnot json\n')
    code, out, err = cli("ir", str(folder), "--modes", "bm25")
    _assert_one_clean_error(code, out, err, f"{folder / 'qa.jsonl'}: line 2 is not JSON")


def test_ir_without_queries_says_so_before_indexing(cli, tmp_path, lab_settings):
    folder = tmp_path / "no_queries"
    folder.mkdir()
    (folder / "a.txt").write_text("Some text worth indexing, but no questions about it.")
    code, out, err = cli("ir", str(folder), "--modes", "bm25")
    _assert_one_clean_error(code, out, err, "'no_queries' has no queries", "queries.jsonl")
    assert _manifests(lab_settings.data_dir, "no_queries") == []


def test_damaged_manifest_names_the_file_and_rebuild_repairs_it(cli, tmp_path, lab_settings):
    folder = tmp_path / "damaged_manifest"
    folder.mkdir()
    (folder / "a.txt").write_text("The parent share of cost is reviewed every year.")
    code, _, _ = cli("index", str(folder))
    assert code == 0
    [manifest] = _manifests(lab_settings.data_dir, "damaged_manifest")
    manifest.write_text('{"dataset": "damaged_manifest",\n  "fingerprint": \n')
    code, out, err = cli("search", str(folder), "share of cost", "--mode", "bm25")
    _assert_one_clean_error(code, out, err, f"{manifest}: line 3 column", "manifest is damaged", "rag-lab index")
    code, out, _ = cli("index", str(folder))  # the fix the message gives works
    assert code == 0 and "index built" in out
    code, out, _ = cli("search", str(folder), "share of cost", "--mode", "bm25", "--json")
    assert code == 0 and json.loads(out)[0]["filename"] == "a.txt"


def test_failed_build_is_reported_not_build_it_first(cli, tmp_path):
    folder = tmp_path / "unreadable"
    folder.mkdir()
    (folder / "scan.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    (folder / "empty.txt").write_text("   \n")
    code, out, err = cli("index", str(folder))
    err = "".join(line for line in err.splitlines(keepends=True) if not _PROGRESS.match(line))  # "parsing: 2/2 files"
    _assert_one_clean_error(code, out, err, "No indexable documents", "empty.txt: empty file", "scan.pdf",
                            "add .pdf, .txt, .md or .rst files")
    for argv in (("search", str(folder), "anything", "--mode", "bm25"),
                 ("ask", str(folder), "anything?", "--mode", "bm25", "--no-rerank")):
        code, out, err = cli(*argv)
        _assert_one_clean_error(code, out, err, "its last build failed", "No indexable documents", "empty.txt",
                                "add .pdf, .txt, .md or .rst files")
        assert "build it first" not in err
    (folder / "notes.txt").write_text("Now there is text about the parent share of cost.")
    code, out, _ = cli("index", str(folder))
    assert code == 0
    code, out, _ = cli("search", str(folder), "share of cost", "--mode", "bm25", "--json")
    assert code == 0 and json.loads(out)[0]["filename"] == "notes.txt"


def test_index_progress_is_plain_lines_when_stderr_is_not_a_terminal(cli, tmp_path):
    folder = tmp_path / "progress_lines"
    folder.mkdir()
    for i in range(3):
        (folder / f"doc{i}.txt").write_text(f"Document {i} on progress reporting number {i * 7919}.")
    code, out, err = cli("index", str(folder))
    assert code == 0 and "index built" in out
    assert "\r" not in err
    assert "embedding: 3/3 chunks (100%)" in err and "writing edge index: 3/3 chunks (100%)" in err


def test_search_prints_a_header_and_one_no_explanation_note(cli):
    code, out, _ = cli("search", "texas_childcare", "parent share of cost", "--mode", "bm25", "--explain")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("bm25 search in texas_childcare: 'parent share of cost' — 5 result(s) in ")
    assert lines[0].endswith(" ms")
    assert out.count("(no explanation") == 1


def test_ir_table_and_json_say_what_they_cover(cli, tmp_path):
    root = _beir(tmp_path / "tiny_beir")
    report = tmp_path / "out" / "ir.json"
    code, out, err = cli("ir", str(root), "--modes", "bm25,fusion", "--limit", "2", "--prefetch", "20",
                         "--json", str(report))
    assert code == 0, err
    assert "2 of 3 judged queries (a sample spread over the documents)" in out and "fusion k=60" in out and "prefetch 20" in out
    assert "all-MiniLM-L6-v2" in out
    data = json.loads(report.read_text())
    assert data["queries"] == {"evaluated": 2, "available": 3, "ids": ["7", "12"], "unjudgeable": 0, "split": "all"}
    assert data["params"]["fusion_k"] == 60 and data["params"]["prefetch"] == 20 and data["params"]["depth"] == 100
    assert "all-MiniLM-L6-v2" in data["models"]["embedding"] and data["models"]["bm25_k1"] == 0.9
    assert data["created"][:4].isdigit() and data["dataset"] == "tiny_beir"
    assert set(data["results"]) == {"bm25", "fusion"}
    per_query = data["per_query"]["bm25"]["ndcg@10"]
    assert per_query == {"7": 1.0, "12": 1.0}  # each query's own abstract ranks first
    assert data["results"]["bm25"]["ndcg@10"] == pytest.approx(1.0)
