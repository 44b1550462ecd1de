"""Index builds on a tiny folder dataset: manifest, idempotence, embedding reuse, Qdrant schema, BM25
persistence, crash safety and orphan clean-up. Each test gets its own data dir (one Qdrant client
per folder per process)."""

from __future__ import annotations

import pytest
from qdrant_client import models

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.errors import IndexNotReadyError, StaleIndexWarning
from rag_lab.index import CorpusIndex, IndexManifest, build_index
from rag_lab.index import build as build_module
from rag_lab.index.paths import IndexPaths
from rag_lab.index.open import generations, remove_generations
from rag_lab.index.store import open_qdrant
from rag_lab.models.onnx_embedding import openvino_precision

FILES = {
    "alpha.txt": "Alpha notes. The heron nests beside the quarry lake every spring.",
    "beta.md": "# Beta\n\nCopper kettles are polished with lemon and salt before the fair.",
    "gamma.rst": "Gamma\n=====\n\nThe night train to Tromsø leaves at nine from platform four.",
}


def _make_lab(tmp_path, backend: str):
    datasets = tmp_path / "datasets"
    folder = datasets / "tiny"
    folder.mkdir(parents=True)
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "slides.pptx").write_bytes(b"PK\x03\x04")
    settings = load_settings(data_dir=tmp_path / "data", datasets_dir=datasets, vector_backend=backend)
    return settings, folder


@pytest.fixture(params=["edge", "local"])
def lab(tmp_path, request):
    """(settings, dataset folder) with three small text files and one unsupported file, per backend."""
    return _make_lab(tmp_path, request.param)


@pytest.fixture
def lab_local(tmp_path):
    return _make_lab(tmp_path, "local")


@pytest.fixture
def frozen_clock(monkeypatch):
    """Every build in the test starts in the same second."""
    import time
    from types import SimpleNamespace

    monkeypatch.setattr(build_module, "time", SimpleNamespace(time=lambda: 1_767_225_600.0, perf_counter=time.perf_counter))


def _build(lab, **kwargs):
    settings, _ = lab
    return build_index(resolve_dataset("tiny", settings.datasets_dir), settings, progress=False, **kwargs)


def _paths(settings) -> IndexPaths:
    return IndexPaths.for_dataset(settings, resolve_dataset("tiny", settings.datasets_dir))


def _generations(settings) -> list[str]:
    """The vector generations (edge shards or local collections) of tiny's index that exist."""
    return generations(settings, _paths(settings))


def _bm25_dirs(settings) -> list[str]:
    return sorted(p.name for p in IndexPaths.for_dataset(settings, resolve_dataset("tiny", settings.datasets_dir)).root.glob("bm25-*"))


def _bm25_files(settings, query: str, top_k: int = 3) -> list[str]:
    from rag_lab.retrieve.bm25 import BM25Retriever

    index = CorpusIndex.open("tiny", settings)
    return [r.node.metadata["filename"] for r in BM25Retriever(index, top_k=top_k).retrieve(query)]


def test_first_build_writes_manifest_listing_loaded_and_skipped(lab):
    settings, _ = lab
    result = _build(lab)
    manifest = result.manifest
    assert not result.up_to_date
    assert (result.embedded, result.reused) == (3, 0)
    assert sorted(manifest.loaded) == sorted(FILES)
    assert manifest.skipped == [{"path": "slides.pptx", "reason": "unsupported file type .pptx"}]
    assert (manifest.n_documents, manifest.n_chunks) == (3, 3)
    assert manifest.embed_model == f"local:sentence-transformers/all-MiniLM-L6-v2+openvino-{openvino_precision()}"
    assert manifest.embed_dim == 384
    on_disk = IndexManifest.load(IndexPaths.for_dataset(settings, resolve_dataset("tiny", settings.datasets_dir)).manifest)
    assert on_disk == manifest
    assert "3 chunks" in result.summary() and "1 file(s) skipped" in result.summary()


def test_second_build_is_up_to_date_and_reuses_everything(lab):
    settings, _ = lab
    first = _build(lab)
    second = _build(lab)
    assert second.up_to_date
    assert (second.embedded, second.reused) == (0, first.manifest.n_chunks)
    assert second.manifest == first.manifest
    assert "up to date" in second.summary()
    assert _generations(settings) == [first.manifest.collection]


def test_changed_file_reembeds_only_that_chunk(lab):
    settings, folder = lab
    first = _build(lab)
    (folder / "beta.md").write_text("# Beta\n\nBrass trumpets echo across the harbour at dawn.", encoding="utf-8")
    second = _build(lab)
    assert not second.up_to_date
    assert (second.embedded, second.reused) == (1, first.manifest.n_chunks - 1)
    assert second.manifest.fingerprint != first.manifest.fingerprint
    assert second.manifest.collection != first.manifest.collection
    # the previous generation is kept for readers that opened it a moment ago…
    assert _generations(settings) == sorted([first.manifest.collection, second.manifest.collection])
    assert _bm25_files(settings, "trumpets harbour") == ["beta.md"]
    assert _bm25_files(settings, "copper kettles") == []
    (folder / "beta.md").write_text("# Beta\n\nA third version about lighthouses.", encoding="utf-8")
    third = _build(lab)
    # …and removed by the build after
    assert _generations(settings) == sorted([second.manifest.collection, third.manifest.collection])
    assert _bm25_dirs(settings) == sorted([second.manifest.bm25_dir, third.manifest.bm25_dir])


def test_force_rebuilds_with_all_embeddings_reused(lab, frozen_clock):
    settings, _ = lab
    first = _build(lab)
    forced = _build(lab, force=True)
    assert not forced.up_to_date
    assert (forced.embedded, forced.reused) == (0, first.manifest.n_chunks)
    assert forced.manifest.fingerprint == first.manifest.fingerprint
    # every build writes a new collection and BM25 folder, even within the same second (frozen_clock)
    assert forced.manifest.collection != first.manifest.collection
    assert forced.manifest.bm25_dir != first.manifest.bm25_dir
    assert _generations(settings) == sorted([first.manifest.collection, forced.manifest.collection])
    assert _bm25_dirs(settings) == sorted([first.manifest.bm25_dir, forced.manifest.bm25_dir])


def test_collection_has_named_dense_and_idf_sparse_vectors(lab_local):
    settings, _ = lab = lab_local
    manifest = _build(lab).manifest
    client = open_qdrant(settings)
    info = client.get_collection(manifest.collection)
    dense = info.config.params.vectors
    sparse = info.config.params.sparse_vectors
    assert set(dense) == {manifest.dense_vector} == {"dense"}
    assert dense["dense"].size == manifest.embed_dim
    assert dense["dense"].distance == models.Distance.COSINE
    assert set(sparse) == {manifest.sparse_vector} == {"sparse"}
    assert sparse["sparse"].modifier == models.Modifier.IDF
    assert client.count(manifest.collection, exact=True).count == manifest.n_chunks
    points, _ = client.scroll(manifest.collection, limit=10, with_payload=True, with_vectors=True)
    assert sorted(p.payload["filename"] for p in points) == sorted(FILES)
    for point in points:
        assert len(point.vector["dense"]) == manifest.embed_dim
        assert point.vector["sparse"].indices and len(point.vector["sparse"].values) == len(point.vector["sparse"].indices)


def test_bm25_index_is_persisted_and_loads_with_the_same_ids(lab):
    settings, _ = lab
    manifest = _build(lab).manifest
    index = CorpusIndex.open("tiny", settings)
    assert index.bm25_dir == str(IndexPaths.for_dataset(settings, resolve_dataset("tiny", settings.datasets_dir)).root / manifest.bm25_dir)
    stock = index.bm25
    assert len(stock.corpus) == manifest.n_chunks
    ids = [entry["node_id"] for entry in stock.corpus]
    assert set(index.vectors.payloads(ids)) == set(ids)  # every BM25 entry is a vector point
    assert index.vectors.count() == manifest.n_chunks
    assert _bm25_files(settings, "heron quarry") == ["alpha.txt"]
    assert _bm25_files(settings, "Tromsø train") == ["gamma.rst"]


@pytest.mark.filterwarnings("ignore::rag_lab.errors.StaleIndexWarning")  # asserted once below
def test_crash_mid_build_keeps_the_previous_index_and_next_build_cleans_up(lab, monkeypatch):
    settings, folder = lab
    previous = _build(lab).manifest
    manifest_path = IndexPaths.for_dataset(settings, resolve_dataset("tiny", settings.datasets_dir)).manifest
    saved = manifest_path.read_text(encoding="utf-8")
    (folder / "alpha.txt").write_text("Alpha notes. A zeppelin drifts over the vineyard.", encoding="utf-8")

    real_bm25 = build_module._build_bm25

    def crash(nodes, token_lists, path):
        real_bm25(nodes, token_lists, path)  # the new collection and BM25 folder are both written…
        raise RuntimeError("simulated crash")  # …but the manifest is not

    monkeypatch.setattr(build_module, "_build_bm25", crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        _build(lab)
    assert manifest_path.read_text(encoding="utf-8") == saved
    assert len(_generations(settings)) == 2 and len(_bm25_dirs(settings)) == 2  # orphans exist

    with pytest.warns(StaleIndexWarning):  # alpha.txt changed since the (previous) index was built
        index = CorpusIndex.open("tiny", settings)
    assert index.collection == previous.collection
    assert _bm25_files(settings, "zeppelin vineyard") == []  # the half-built index is not used
    assert _bm25_files(settings, "heron quarry") == ["alpha.txt"]
    from rag_lab.retrieve.hybrid import HybridRetriever

    hits = HybridRetriever(index, top_k=3, prefetch=10).retrieve("heron nests by the quarry lake")
    assert hits[0].node.metadata["filename"] == "alpha.txt"
    assert "zeppelin" not in " ".join(h.node.get_content() for h in hits)

    monkeypatch.setattr(build_module, "_build_bm25", real_bm25)
    recovered = _build(lab)
    assert not recovered.up_to_date
    assert recovered.embedded == 0  # the crashed build had cached the new embedding
    assert _generations(settings) == sorted([previous.collection, recovered.manifest.collection])  # orphan gone
    assert _bm25_dirs(settings) == sorted([previous.bm25_dir, recovered.manifest.bm25_dir])
    assert _bm25_files(settings, "zeppelin vineyard") == ["alpha.txt"]


def test_crash_right_after_creating_the_collection_leaves_the_old_one_intact(lab, monkeypatch, frozen_clock):
    settings, _ = lab
    previous = _build(lab).manifest

    def crash(*args, **kwargs):
        real_create(*args, **kwargs)
        raise RuntimeError("simulated crash")

    real_create = build_module.create_writer
    monkeypatch.setattr(build_module, "create_writer", crash)
    with pytest.raises(RuntimeError):
        _build(lab, force=True)
    index = CorpusIndex.open("tiny", settings)
    assert index.collection == previous.collection and index.vectors.count() == previous.n_chunks
    assert _bm25_files(settings, "copper kettles") == ["beta.md"]


def test_never_indexed_dataset_is_not_ready_with_a_hint(lab):
    settings, _ = lab
    with pytest.raises(IndexNotReadyError) as info:
        CorpusIndex.open("tiny", settings)
    assert "no complete index" in info.value.message
    assert "rag-lab index tiny" in str(info.value)


def test_manifest_naming_a_missing_collection_is_not_ready(lab):
    settings, _ = lab
    manifest = _build(lab).manifest
    remove_generations(settings, _paths(settings), keep={manifest.bm25_dir})  # vectors gone, BM25 kept
    with pytest.raises(IndexNotReadyError, match="which is missing") as info:
        CorpusIndex.open("tiny", settings)
    assert "--force" in info.value.hint
    assert not _build(lab).up_to_date  # and the next build repairs it
    assert CorpusIndex.open("tiny", settings).manifest.n_chunks == 3


def test_cleanup_spares_datasets_whose_name_extends_this_one(tmp_path):
    from rag_lab.config import load_settings
    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import build_index
    from rag_lab.index.store import open_qdrant

    settings = load_settings(data_dir=tmp_path / "lab", vector_backend="local")
    for name in ("a", "a__b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "doc.txt").write_text(f"Dataset {name} talks about parent share of cost.", encoding="utf-8")
    built = {n: build_index(resolve_dataset(tmp_path / n), settings, progress=False) for n in ("a__b", "a")}
    build_index(resolve_dataset(tmp_path / "a"), settings, progress=False, force=True)
    names = {c.name for c in open_qdrant(settings).get_collections().collections}
    assert built["a__b"].manifest.collection in names
