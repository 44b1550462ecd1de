"""The `rag-lab` command line, run in-process on the session's real texas_childcare index."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rag_lab.fusion.rrf import DEFAULT_RRF_K

REPO = Path(__file__).resolve().parents[2]
BCY = "bcy-26-income-eligibility-and-maximum-psoc-twc.pdf"


@pytest.fixture
def cli(texas_index, lab_cli):
    """``rag-lab ARGS`` in process, with the session's texas_childcare index built."""
    return lab_cli


def test_search_money_amount_bm25_json(cli):
    code, out, _ = cli("search", "texas_childcare", "$4,106", "--mode", "bm25", "--json")
    assert code == 0
    results = json.loads(out)
    assert results and set(results[0]) == {"rank", "score", "doc_id", "filename", "page", "text"}
    top = results[0]
    assert (top["rank"], top["filename"], top["page"], top["doc_id"]) == (1, BCY, 1, BCY)
    assert "$4,106" in top["text"]
    assert [r["rank"] for r in results] == list(range(1, len(results) + 1))
    assert len(results) <= 5  # default top-k
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0


def test_json_before_the_dataset_is_the_flag_alone(cli, tmp_path):
    """`--json` followed by a word that is not a .json path leaves the word to the command (it was read as
    the file to write, and the dataset went missing); a .json path is still the file."""
    from rag_lab.cli.main import bare_json_flags

    assert bare_json_flags(["search", "--json", "texas_childcare", "q"]) == ["search", "--json", "-", "texas_childcare", "q"]
    assert bare_json_flags(["ir", "x", "--json", "out.JSON"]) == ["ir", "x", "--json", "out.JSON"]
    assert bare_json_flags(["ir", "x", "--json", "--limit", "3"]) == ["ir", "x", "--json", "--limit", "3"]
    code, out, _ = cli("search", "--json", "texas_childcare", "$4,106", "--mode", "bm25")
    assert code == 0 and json.loads(out)[0]["filename"] == BCY
    target = tmp_path / "hits.json"
    code, out, _ = cli("search", "texas_childcare", "$4,106", "--mode", "bm25", "--json", str(target))
    assert code == 0 and json.loads(target.read_text())[0]["filename"] == BCY


def test_search_dense_json_finds_the_income_table(cli):
    code, out, _ = cli("search", "texas_childcare", "bi-weekly income limit for a family of 5", "--mode", "dense",
                       "--json", "--top-k", "3")
    assert code == 0
    results = json.loads(out)
    assert len(results) == 3
    assert results[0]["filename"] == BCY and results[0]["page"] == 1
    assert all(-1.0 <= r["score"] <= 1.0 for r in results)  # cosine


_EXPLAIN = re.compile(
    r"dense rank (?P<dr>\d+|—) \(score (?P<ds>[-\d.]+|—)\) → term (?P<dt>[\d.]+) \| "
    r"sparse rank (?P<sr>\d+|—) \(score (?P<ss>[-\d.]+|—)\) → term (?P<st>[\d.]+) \| "
    r"fused (?P<f>[\d.]+) = (?P<dt2>[\d.]+) \+ (?P<st2>[\d.]+) \[(?P<src>\w+)\]"
)
_HEADER = re.compile(r"^\s*(?P<rank>\d+)\. \[(?P<score>[\d.]+)\] (?P<file>\S+)(?:, page (?P<page>\d+))?$")


def test_hybrid_explain_shows_both_legs_and_terms_summing_to_the_fused_score(cli):
    code, out, _ = cli("search", "texas_childcare", "$4,106 bi-weekly family of 5", "--mode", "hybrid", "--explain")
    assert code == 0
    lines = out.splitlines()
    headers = [m for m in map(_HEADER.match, lines) if m]
    explained = [m for m in map(_EXPLAIN.search, lines) if m]
    assert len(headers) == len(explained) == 5
    assert headers[0]["file"] == BCY and headers[0]["page"] == "1"
    both = 0
    for header, e in zip(headers, explained):
        for leg in ("d", "s"):
            rank, term = e[f"{leg}r"], float(e[f"{leg}t"])
            expected = 0.0 if rank == "—" else 1.0 / (DEFAULT_RRF_K + int(rank))  # RRF, ranks from 1
            assert term == pytest.approx(expected, abs=1e-6)
        assert float(e["f"]) == pytest.approx(float(e["dt"]) + float(e["st"]), abs=2e-6)
        assert (e["dt2"], e["st2"]) == (e["dt"], e["st"])
        assert float(header["score"]) == pytest.approx(float(e["f"]), abs=1e-4)
        both += e["src"] == "both"
        assert e["src"] == {(True, True): "both", (True, False): "dense_only", (False, True): "sparse_only"}[
            (e["dr"] != "—", e["sr"] != "—")]
    assert both >= 1
    assert explained[0]["dr"] != "—" and explained[0]["sr"] != "—"


def test_explain_json_carries_the_explanation(cli):
    code, out, _ = cli("search", "texas_childcare", "$4,106", "--mode", "hybrid", "--explain", "--json", "--top-k", "2")
    assert code == 0
    results = json.loads(out)
    for r in results:
        e = r["explanation"]
        assert r["score"] == pytest.approx(e["fused_score"]) == pytest.approx(e["dense_term"] + e["sparse_term"])


def _assert_one_clean_error(code: int, out: str, err: str, *fragments: str) -> None:
    assert code != 0
    assert out == ""
    assert err.startswith("error: ") and err.count("error:") == 1
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def test_unknown_dataset(cli):
    code, out, err = cli("search", "no_such_dataset", "income", "--mode", "bm25")
    _assert_one_clean_error(code, out, err, "Unknown dataset 'no_such_dataset'", "scifact", "texas_childcare")


def test_empty_folder_dataset(cli, tmp_path):
    empty = tmp_path / "empty_docs"
    empty.mkdir()
    for argv in (("search", str(empty), "income", "--mode", "bm25"), ("index", str(empty))):
        code, out, err = cli(*argv)
        _assert_one_clean_error(code, out, err, "is empty", "add .pdf, .txt, .md or .rst files")


def test_index_not_built(cli, tmp_path):
    folder = tmp_path / "never_indexed"
    folder.mkdir()
    (folder / "a.txt").write_text("some text", encoding="utf-8")
    code, out, err = cli("search", str(folder), "income", "--mode", "dense")
    _assert_one_clean_error(code, out, err, "'never_indexed' has no complete index", f"rag-lab index {folder.resolve()}")  # the path the user can run as is


@pytest.mark.parametrize("query", ["", "   "])
def test_empty_query(cli, query):
    code, out, err = cli("search", "texas_childcare", query, "--mode", "bm25")
    _assert_one_clean_error(code, out, err, "query is empty")


def test_bad_config_value(cli, monkeypatch):
    monkeypatch.setenv("RAG_LAB_CHUNK_WORDS", "abc")
    code, out, err = cli("search", "texas_childcare", "income", "--mode", "bm25")
    _assert_one_clean_error(code, out, err, "Invalid configuration", "RAG_LAB_CHUNK_WORDS", "'abc'")


def test_kendra_without_index_id(cli):
    code, out, err = cli("search", "texas_childcare", "income", "--mode", "kendra")
    _assert_one_clean_error(code, out, err, "Kendra is not configured: set KENDRA_INDEX_ID")


def test_index_command_reports_up_to_date(cli, texas_index):
    code, out, _ = cli("index", "texas_childcare")
    assert code == 0
    assert out.startswith("texas_childcare: index up to date")
    assert f"{texas_index.manifest.n_chunks} chunks" in out and "0 computed" in out


def test_debug_shows_the_traceback(cli):
    from rag_lab.errors import DatasetError

    with pytest.raises(DatasetError):
        cli("search", "no_such_dataset", "income", "--debug")


def test_console_script_help():
    script = Path(sys.executable).with_name("rag-lab")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "rag_lab"]
    done = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: rag-lab")
    for command in ("index", "search", "ir"):
        assert re.search(rf"^\s+{command}\s", done.stdout, re.M), command
