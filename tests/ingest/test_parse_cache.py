"""The parse cache: an unchanged PDF is parsed once; a changed one (or a new parser) again."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from rag_lab.ingest import load_folder
from rag_lab.ingest import loaders
from rag_lab.ingest.parse_cache import ParseCache, file_hash

TEXAS = Path(__file__).resolve().parents[2] / "datasets" / "texas_childcare" / "pdfs"
PSOC = "bcy-26-psoc-chart-twc.pdf"


def _texts(documents):
    return [(d.metadata["doc_id"], d.metadata.get("page"), d.text) for d in documents]


def test_second_load_reads_the_cache_and_gives_the_same_documents(tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(TEXAS / PSOC, folder / PSOC)
    (folder / "notes.txt").write_text("Plain text, never cached.", encoding="utf-8")
    calls = []
    real = loaders._pdf_pages
    monkeypatch.setattr(loaders, "_pdf_pages", lambda path: calls.append(path.name) or real(path))

    with ParseCache(tmp_path / "parsed.sqlite") as cache:
        first, _ = load_folder(folder, parse_cache=cache)
        second, report = load_folder(folder, parse_cache=cache)
        assert calls == [PSOC] and (cache.hits, cache.misses) == (1, 1)
    assert _texts(second) == _texts(first) and report.loaded == ["bcy-26-psoc-chart-twc.pdf", "notes.txt"]
    assert any("$" in text for _, _, text in _texts(second))

    with ParseCache(tmp_path / "parsed.sqlite") as cache:  # persisted across processes
        load_folder(folder, parse_cache=cache)
        assert calls == [PSOC]
        monkeypatch.setattr(loaders, "PARSER_VERSION", "pdfplumber-next")  # a new parser re-parses
        load_folder(folder, parse_cache=cache)
        assert calls == [PSOC, PSOC]


def test_changed_file_is_parsed_again(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(TEXAS / PSOC, folder / "a.pdf")
    with ParseCache(tmp_path / "parsed.sqlite") as cache:
        load_folder(folder, parse_cache=cache)
        before = file_hash(folder / "a.pdf")
        shutil.copy(TEXAS / "bcy-26-income-eligibility-and-maximum-psoc-twc.pdf", folder / "a.pdf")
        assert file_hash(folder / "a.pdf") != before
        documents, _ = load_folder(folder, parse_cache=cache)
        assert (cache.hits, cache.misses) == (0, 2)
    assert any("92,041" in d.text for d in documents)


def test_progress_reports_each_file_as_plain_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_PROGRESS_INTERVAL", "0")
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (folder / name).write_text(f"text {name}", encoding="utf-8")
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    load_folder(folder, progress=True)
    lines = err.getvalue().splitlines()
    assert "\r" not in err.getvalue() and lines[-1].startswith("parsing: 3/3 files")


def test_several_pdfs_are_parsed_in_worker_processes_exactly_as_one_by_one(tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    shutil.copytree(TEXAS, folder)
    pools = []

    class SpyPool(loaders.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            pools.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(loaders, "ProcessPoolExecutor", SpyPool)
    monkeypatch.setattr(loaders.os, "cpu_count", lambda: 2)
    with ParseCache(tmp_path / "parsed.sqlite") as cache:
        parallel, report = load_folder(folder, parse_cache=cache)
        assert cache.misses == 3 and len(pools) == 1  # three PDFs, two worker processes
        load_folder(folder, parse_cache=cache)
        assert cache.hits == 3 and len(pools) == 1  # every parse was cached as it landed
    monkeypatch.setattr(loaders.os, "cpu_count", lambda: 1)
    sequential, _ = load_folder(folder)
    assert len(pools) == 1 and _texts(parallel) == _texts(sequential)
    assert report.loaded == sorted(p.name for p in TEXAS.glob("*.pdf"))
