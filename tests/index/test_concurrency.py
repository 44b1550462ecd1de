"""Concurrent use of one lab's indexes by real processes (the default edge backend): a process
holding a query session open (a notebook kernel) does not keep `rag-lab search` out, indexing
another dataset meanwhile blocks nobody, and a rebuild under an open session serves the previous
complete index to that session and the new one to new readers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SESSION = textwrap.dedent("""
    import json, sys
    from rag_lab.config import load_settings
    from rag_lab.datasets import resolve_dataset
    from rag_lab.retrieve import build_retriever

    settings = load_settings()
    retriever = build_retriever("hybrid", settings, resolve_dataset(sys.argv[1]), top_k=2)
    for line in sys.stdin:  # one query per line, answered while the session stays open
        hits = retriever.retrieve(line.strip())
        print(json.dumps([h.node.metadata["filename"] for h in hits]), flush=True)
""")


def _env(data_dir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_LAB_") and k != "QDRANT_URL"}
    env.update(RAG_LAB_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO),
               TOKENIZERS_PARALLELISM="false")
    return env


def _cli(env, *args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "rag_lab.cli.main", *args], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def _folder(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


def test_search_and_indexing_while_a_session_holds_the_index(tmp_path, monkeypatch):
    from rag_lab.config import load_settings
    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import CorpusIndex, build_index
    from rag_lab.retrieve.bm25 import BM25Retriever

    env = _env(tmp_path / "lab")
    settings = load_settings(data_dir=tmp_path / "lab", vector_backend="edge")
    a = _folder(tmp_path / "a", {"heron.txt": "The heron nests beside the quarry lake every spring.",
                                 "kettle.txt": "Copper kettles are polished with lemon and salt."})
    b = _folder(tmp_path / "b", {f"doc{i}.txt": f"Document {i} about lighthouses and tides, part {i}."
                                 for i in range(40)})
    build_index(resolve_dataset(a), settings, progress=False)

    session = subprocess.Popen([sys.executable, "-c", SESSION, str(a)], env=env, cwd=REPO, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        session.stdin.write("heron quarry lake\n")
        session.stdin.flush()
        assert json.loads(session.stdout.readline())[0] == "heron.txt"  # the session has the shard open

        indexing_b = _cli(env, "index", str(b))  # a different dataset is indexed meanwhile
        search = _cli(env, "search", str(a), "copper kettles lemon", "--mode", "hybrid", "--json")
        out, err = search.communicate(timeout=600)
        assert search.returncode == 0, err
        assert json.loads(out)[0]["filename"] == "kettle.txt"
        assert indexing_b.wait(timeout=600) == 0, indexing_b.stderr.read()
        index_b = CorpusIndex.open(resolve_dataset(b), settings)
        assert BM25Retriever(index_b, top_k=1).retrieve("lighthouses tides part 7")[0].node.metadata["filename"] == "doc7.txt"

        # Rebuild a under the open session: the session keeps the previous complete index,
        # a new reader gets the new one.
        (a / "heron.txt").write_text("A zeppelin drifts over the vineyard at dusk.", encoding="utf-8")
        build_index(resolve_dataset(a), settings, progress=False)
        session.stdin.write("heron quarry lake\n")
        session.stdin.flush()
        assert json.loads(session.stdout.readline())[0] == "heron.txt"  # old generation, still complete
        fresh = CorpusIndex.open(resolve_dataset(a), settings)
        top = BM25Retriever(fresh, top_k=1).retrieve("zeppelin vineyard")[0].node
        assert top.metadata["filename"] == "heron.txt" and "zeppelin" in top.get_content()
        assert fresh.vectors.count() == 2
    finally:
        session.stdin.close()
        session.wait(timeout=120)
    assert session.returncode == 0, session.stderr.read()


@pytest.mark.parametrize("backend", ["edge"])
def test_indexes_live_in_per_dataset_folders(tmp_path, backend):
    from rag_lab.config import load_settings
    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import build_index
    from rag_lab.index.paths import IndexPaths

    settings = load_settings(data_dir=tmp_path / "lab", vector_backend=backend)
    folders = [_folder(tmp_path / n, {"x.txt": f"text of {n}"}) for n in ("one", "two")]
    for folder in folders:
        manifest = build_index(resolve_dataset(folder), settings, progress=False).manifest
        root = IndexPaths.for_dataset(settings, resolve_dataset(folder)).root
        assert (root / manifest.collection / "segments").is_dir()  # the shard sits in the dataset's folder
        assert (root / f"manifest-{backend}.json").exists()
    assert not (tmp_path / "lab" / "qdrant").exists()  # no shared store to lock
