"""`rag-lab index DATASET --ray`: parsing (Ray tasks) and embedding (Ray actors) on a local Ray
instance write the same index as a local build — fingerprint, chunk ids, payloads, BM25 and vectors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.distributed.cluster import RayCluster
from rag_lab.distributed.ingest import ray_executor
from rag_lab.index import CorpusIndex, build_index
from tests.builders import write_folder_dataset
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
            "chunk_ids": [payloads[i]["chunk_id"] for i in ids], "nodes": [_node(payloads[i]) for i in ids],
            "vectors": np.array([vectors[i] for i in ids], dtype=np.float32)}


def _node(payload: dict) -> dict:
    """A stored node's text and metadata. Not its source Document's id: LlamaIndex gives every loaded
    Document a random id, so two local builds differ there too."""
    node = json.loads(payload["_node_content"])
    return {"text": node["text"], "metadata": node["metadata"], "chunk_id": payload["chunk_id"]}


def _fresh(tmp_path, name):
    # own data dir: own parse and embedding caches, so the Ray build parses and embeds every chunk itself
    return load_settings(data_dir=tmp_path / name, datasets_dir=REPO / "datasets")


def test_index_on_ray_writes_the_same_index_as_a_local_build(local_ray, texas_index, lab_settings, tmp_path):
    # the local build is the session's texas_childcare index (built with these settings in this process,
    # or from the parse and embedding caches another worker's build left: the same index either way)
    ray_settings = _fresh(tmp_path, "ray")
    assert ray_settings.model_copy(update={"data_dir": lab_settings.data_dir}) == lab_settings
    dataset = resolve_dataset("texas_childcare", ray_settings.datasets_dir)
    on_ray, _ = run_within(BOUND, build_index, dataset, ray_settings, progress=False,
                           executor=ray_executor(RayCluster(workers=2), ray_settings))
    assert on_ray.embedded == texas_index.manifest.n_chunks > 0  # nothing came from a cache
    assert local_ray.is_initialized()  # the test's instance was reused, and left running

    expected, got = snapshot(lab_settings), snapshot(ray_settings)
    for key in ("fingerprint", "n_chunks", "embed_dim", "avg_chunk_tokens", "loaded", "ids", "chunk_ids", "nodes"):
        assert got[key] == expected[key], key
    assert got["vectors"].shape == expected["vectors"].shape
    # the same batches through the same model: equal up to float rounding of the thread count
    np.testing.assert_allclose(got["vectors"], expected["vectors"], rtol=0, atol=1e-6)
    print(f"max |Δ| between Ray and local vectors: {np.abs(got['vectors'] - expected['vectors']).max():.2e}")


def _cli(data_dir, *argv: str) -> subprocess.CompletedProcess:
    """``rag-lab ARGV`` in a process of its own (a second Ray driver), bounded in time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_LAB_")}
    env.update(RAG_LAB_DATA_DIR=str(data_dir), RAG_LAB_DATASETS_DIR=str(REPO / "datasets"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "rag_lab", *argv], env=env, cwd=data_dir.parent,
                          capture_output=True, text=True, timeout=BOUND)


def test_index_cli_connects_to_a_ray_address_or_starts_its_own_instance(local_ray, tmp_path):
    # a small folder corpus: this test is about the connection (parsing and embedding parity on Ray
    # is the test above, on the PDFs)
    corpus = write_folder_dataset(tmp_path / "pets", {f"{a}.txt": f"A {a} is a pet. It eats twice a day.\n"
                                                      for a in ("cat", "dog", "budgie")})
    data_dir = tmp_path / "cli"
    data_dir.mkdir()
    address = local_ray.get_runtime_context().gcs_address
    done = _cli(data_dir, "index", str(corpus), "--ray", address)
    assert done.returncode == 0, done.stderr
    assert re.search(r"pets: index built — 3 documents, \d+ chunks; embeddings: 0 reused, [1-9]\d* computed",
                     done.stdout), done.stdout
    # no address: a Ray instance of its own (1 worker), started and shut down by the command
    done = _cli(data_dir, "index", str(corpus), "--force", "--ray", "--ray-workers", "1")
    assert done.returncode == 0, done.stderr
    assert "index built" in done.stdout and ", 0 computed" in done.stdout  # the embeddings were cached


def test_ray_workers_needs_ray(lab_cli):
    code, _, err = lab_cli("index", "texas_childcare", "--ray-workers", "2")
    assert code != 0 and "--ray-workers needs --ray" in err


def test_an_unreachable_embedding_server_on_ray_is_the_actors_one_line_error(local_ray, tmp_path):
    from rag_lab.errors import ProviderError
    from tests.index.test_embed_unreachable import closed_port

    url = f"http://127.0.0.1:{closed_port()}/v1"
    settings = load_settings(data_dir=tmp_path / "data", embed_provider="openai_compatible", embed_base_url=url,
                             embed_model="bge-small", max_retries=0)
    corpus = write_folder_dataset(tmp_path / "pets", {"cat.txt": "A cat is a pet.\n"})
    try:
        run_within(BOUND, build_index, resolve_dataset(corpus), settings, progress=False,
                   executor=ray_executor(RayCluster(workers=1), settings))
    except ProviderError as exc:  # the actor's own error, not Ray's wrapper with the remote traceback
        assert type(exc) is ProviderError and "Traceback" not in str(exc)
        assert f"could not reach the API at {url}/embeddings" in str(exc) and "RAG_LAB_EMBED_BASE_URL" in exc.hint
    else:
        raise AssertionError("the build did not fail")
