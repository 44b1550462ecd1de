"""Indexes are keyed by the dataset's resolved path: same-named folders never share an index, an
index built from another folder is refused, an edited folder warns, a failed build is reported."""

from __future__ import annotations

import json
import os
import warnings

import pytest

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.errors import IndexNotReadyError, RagLabWarning, StaleIndexWarning
from rag_lab.index import CorpusIndex, build_index
from rag_lab.index.paths import IndexPaths, index_folder_name, source_key
from rag_lab.retrieve.bm25 import BM25Retriever


def _folder(path, **files):
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def settings(tmp_path):
    return load_settings(data_dir=tmp_path / "lab", datasets_dir=tmp_path / "datasets")


def _top_file(index, query):
    return BM25Retriever(index, top_k=1).retrieve(query)[0].node.metadata["filename"]


def test_folder_name_is_keyed_by_resolved_path_and_variant(tmp_path):
    a, b = tmp_path / "a" / "docs", tmp_path / "b" / "docs"
    assert index_folder_name("docs", a) != index_folder_name("docs", b)
    assert index_folder_name("docs", a) == f"docs-{source_key(a)}"
    assert index_folder_name("docs", tmp_path / "a" / ".." / "a" / "docs") == index_folder_name("docs", a)
    assert index_folder_name("docs", a, "contextual") == f"docs-{source_key(a)}-contextual"
    with pytest.raises(ValueError, match="variant"):
        index_folder_name("docs", a, "../x")


def test_two_folders_with_the_same_name_keep_their_own_indexes(tmp_path, settings):
    a = _folder(tmp_path / "a" / "docs", **{"heron.txt": "The heron nests beside the quarry lake."})
    b = _folder(tmp_path / "b" / "docs", **{"kettle.txt": "Copper kettles are polished with lemon."})
    built_a = build_index(resolve_dataset(a), settings, progress=False)
    build_index(resolve_dataset(b), settings, progress=False)  # used to replace a's index
    assert built_a.manifest.source_path == str(a.resolve())
    assert _top_file(CorpusIndex.open(resolve_dataset(a), settings), "heron quarry lake") == "heron.txt"
    assert _top_file(CorpusIndex.open(resolve_dataset(b), settings), "copper kettles lemon") == "kettle.txt"
    rebuilt_a = build_index(resolve_dataset(a), settings, progress=False)
    assert rebuilt_a.up_to_date  # b's build did not invalidate a's


def test_an_index_built_from_another_folder_is_refused(tmp_path, settings):
    a = _folder(tmp_path / "a" / "docs", **{"heron.txt": "The heron nests beside the quarry lake."})
    b = _folder(tmp_path / "b" / "docs", **{"kettle.txt": "Copper kettles are polished with lemon."})
    build_index(resolve_dataset(a), settings, progress=False)
    # An index folder carried over to where b's index belongs (e.g. a copied data dir).
    src = IndexPaths.for_dataset(settings, resolve_dataset(a)).root
    dst = IndexPaths.for_dataset(settings, resolve_dataset(b)).root
    src.rename(dst)
    with pytest.raises(IndexNotReadyError) as info:
        CorpusIndex.open(resolve_dataset(b), settings)
    text = str(info.value)
    assert str(a.resolve()) in text and str(b.resolve()) in text
    assert f"rag-lab index {b.resolve()}" in info.value.hint


def test_an_edited_folder_warns_until_it_is_reindexed(tmp_path, settings):
    folder = _folder(tmp_path / "docs", **{"heron.txt": "The heron nests beside the quarry lake."})
    build_index(resolve_dataset(folder), settings, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning while unchanged
        CorpusIndex.open(resolve_dataset(folder), settings)
        # Touched (newer mtime) but identical content: not stale.
        st = (folder / "heron.txt").stat()
        os.utime(folder / "heron.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        CorpusIndex.open(resolve_dataset(folder), settings)

    (folder / "heron.txt").write_text("A zeppelin drifts over the vineyard.", encoding="utf-8")
    with pytest.warns(StaleIndexWarning, match="has changed since it was indexed") as caught:
        index = CorpusIndex.open(resolve_dataset(folder), settings)
    assert issubclass(StaleIndexWarning, RagLabWarning)
    assert f"rag-lab index {folder.resolve()}" in str(caught[0].message)
    assert _top_file(index, "heron quarry") == "heron.txt"  # still the old (complete) index

    build_index(resolve_dataset(folder), settings, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CorpusIndex.open(resolve_dataset(folder), settings)


def test_a_failed_build_is_reported_instead_of_build_it_first(tmp_path, settings, monkeypatch):
    folder = _folder(tmp_path / "docs", **{"heron.txt": "The heron nests beside the quarry lake."})
    dataset = resolve_dataset(folder)
    from rag_lab.datasets import Dataset

    def broken(self, **kwargs):
        raise RuntimeError("pdf parser crashed on heron.txt")

    monkeypatch.setattr(Dataset, "load_documents", broken)
    with pytest.raises(RuntimeError):
        build_index(dataset, settings, progress=False)
    with pytest.raises(IndexNotReadyError) as info:
        CorpusIndex.open(dataset, settings)
    assert "last build failed" in info.value.message and "pdf parser crashed on heron.txt" in info.value.message
    assert "build it first" not in str(info.value)

    monkeypatch.undo()
    build_index(dataset, settings, progress=False)
    assert not IndexPaths.for_dataset(settings, dataset).failure.exists()
    assert CorpusIndex.open(dataset, settings).manifest.n_chunks == 1


def test_an_old_layout_index_asks_for_a_rebuild(tmp_path, settings):
    folder = _folder(tmp_path / "datasets" / "tiny", **{"a.txt": "some text"})
    legacy = settings.index_dir / "tiny"
    legacy.mkdir(parents=True)
    (legacy / "manifest.json").write_text(json.dumps({"dataset": "tiny"}), encoding="utf-8")
    with pytest.raises(IndexNotReadyError, match="old layout") as info:
        CorpusIndex.open("tiny", settings)
    assert "rag-lab index tiny" in info.value.hint
    assert folder.exists()


def test_cli_prints_the_stale_warning_as_one_line(tmp_path, settings, monkeypatch, capsys):
    from rag_lab.cli import main
    from rag_lab.config import get_settings

    folder = _folder(tmp_path / "docs", **{"heron.txt": "The heron nests beside the quarry lake."})
    build_index(resolve_dataset(folder), settings, progress=False)
    (folder / "heron.txt").write_text("The heron nests beside the quarry lake, edited.", encoding="utf-8")
    for name in list(os.environ):
        if name.startswith("RAG_LAB_") or name == "QDRANT_URL":
            monkeypatch.delenv(name)
    monkeypatch.setenv("RAG_LAB_DATA_DIR", str(settings.data_dir))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("rag_lab.index.store.close_all", lambda: None)
    get_settings.cache_clear()
    try:
        code = main(["search", str(folder), "heron", "--mode", "bm25", "--json"])
    finally:
        get_settings.cache_clear()
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)[0]["filename"] == "heron.txt"
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: ") and "has changed since it was indexed" in lines[0]
