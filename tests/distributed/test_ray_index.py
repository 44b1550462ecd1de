"""`rag-lab index DATASET --ray`: parsing (Ray tasks) and embedding (Ray actors) on a local Ray
instance write the same index as a local build — fingerprint, chunk ids, payloads, BM25 and vectors."""

from __future__ import annotations

import numpy as np

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.distributed.cluster import RayCluster
from rag_lab.index import CorpusIndex, build_index
from tests.conftest import REPO
from tests.models.fake_openai_server import run_within

BOUND = 300.0  # seconds: the machine's 2 cores are shared


def snapshot(settings) -> dict:
    """Everything a query can see of the texas_childcare index, in chunk-id order."""
    index = CorpusIndex.open("texas_childcare", settings)
    ids = sorted(doc["node_id"] for doc in index.bm25.corpus)
    vectors = index.vectors.dense_vectors(ids)
    payloads = index.vectors.payloads(ids)
    m = index.manifest
    return {"fingerprint": m.fingerprint, "n_chunks": m.n_chunks, "embed_dim": m.embed_dim,
            "avg_chunk_tokens": m.avg_chunk_tokens, "loaded": m.loaded, "ids": ids,
            "chunk_ids": [payloads[i]["chunk_id"] for i in ids], "payloads": [payloads[i] for i in ids],
            "vectors": np.array([vectors[i] for i in ids], dtype=np.float32)}


def _fresh(tmp_path, name):
    # own data dir: own parse and embedding caches, so the Ray build parses and embeds every chunk itself
    return load_settings(data_dir=tmp_path / name, datasets_dir=REPO / "datasets")


def test_index_on_ray_writes_the_same_index_as_a_local_build(local_ray, tmp_path):
    local_settings, ray_settings = _fresh(tmp_path, "local"), _fresh(tmp_path, "ray")
    dataset = resolve_dataset("texas_childcare", local_settings.datasets_dir)
    local, _ = run_within(BOUND, build_index, dataset, local_settings, progress=False)
    on_ray, _ = run_within(BOUND, build_index, dataset, ray_settings, progress=False,
                           ray=RayCluster(workers=2))
    assert on_ray.embedded == local.embedded == local.manifest.n_chunks > 0  # nothing came from a cache
    assert local_ray.is_initialized()  # the test's instance was reused, and left running

    expected, got = snapshot(local_settings), snapshot(ray_settings)
    for key in ("fingerprint", "n_chunks", "embed_dim", "avg_chunk_tokens", "loaded", "ids", "chunk_ids", "payloads"):
        assert got[key] == expected[key], key
    assert got["vectors"].shape == expected["vectors"].shape
    # the same batches through the same model: equal up to float rounding of the thread count
    np.testing.assert_allclose(got["vectors"], expected["vectors"], rtol=0, atol=1e-5)
    print(f"max |Δ| between Ray and local vectors: {np.abs(got['vectors'] - expected['vectors']).max():.2e}")


def test_index_cli_takes_ray_with_and_without_an_address(local_ray, lab_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_LAB_DATA_DIR", str(tmp_path / "cli"))
    code, out, _ = run_within(BOUND, lab_cli, "index", "texas_childcare", "--ray")[0], None, None
    assert code == 0
    address = local_ray.get_runtime_context().gcs_address
    code, out, _ = run_within(BOUND, lab_cli, "index", "texas_childcare", "--force", "--ray", address)[0]
    assert code == 0 and "texas_childcare: index built" in out and "0 computed" in out  # embeddings reused
