"""The local MiniLM off PyTorch (OpenVINO, ONNX Runtime): the export from the shipped weights, parity
with the PyTorch path on real SciFact passages, the embedding ids, and length bucketing keeping the
caller's order."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from rag_lab.config import load_settings
from rag_lab.models import embed_model_id, get_embed_model
from rag_lab.models.embeddings import embed_queries, local_minilm_path
from rag_lab.errors import ConfigError
from rag_lab.models.onnx_embedding import (
    OnnxEmbedding,
    export_onnx,
    exported_model_path,
    cpu_threads,
    length_buckets,
    openvino_model,
    openvino_precision,
)

REPO = Path(__file__).resolve().parents[2]


def scifact_passages(n: int) -> list[str]:
    """The first ``n`` SciFact abstracts (title + text), as the index embeds them: long and short."""
    corpus = REPO / "datasets" / "scifact" / "corpus.jsonl.gz"
    opener = gzip.open if corpus.suffix == ".gz" else open
    with opener(corpus, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in itertools.islice(lines, n)]
    return [f"{row['title']}\n{row['text']}" for row in rows]


@pytest.fixture(scope="module")
def passages() -> list[str]:
    texts = scifact_passages(6)
    return texts + ["Vitamin D and fractures?", "a"]  # a query-like text and a one-token one


@pytest.fixture(scope="module")
def torch_vectors(passages) -> np.ndarray:
    settings = load_settings(_env_file=None, embed_backend="torch")
    return np.asarray(get_embed_model(settings).get_text_embedding_batch(passages))


@pytest.fixture(scope="module")
def fresh_export(tmp_path_factory) -> Path:
    """The fp32 graph exported from the shipped weights into an empty models folder by the set-up step."""
    from rag_lab.config import get_settings
    from rag_lab.warmup import prepare_local_embedding

    models_dir = tmp_path_factory.mktemp("onnx_export")
    with pytest.MonkeyPatch.context() as patch:
        for name in ("RAG_LAB_EMBED_PROVIDER", "RAG_LAB_EMBED_BACKEND"):
            patch.delenv(name, raising=False)
        patch.setenv("RAG_LAB_MODELS_DIR", str(models_dir))
        patch.chdir(models_dir)  # no stray .env
        get_settings.cache_clear()
        prepare_local_embedding()
    get_settings.cache_clear()
    return exported_model_path(models_dir, "onnx")


def cosines(a, b) -> np.ndarray:
    return (np.asarray(a) * np.asarray(b)).sum(axis=1)


@pytest.mark.parametrize("runtime", ["openvino", "onnxruntime"])
def test_the_export_loads_and_agrees_with_pytorch(fresh_export, passages, torch_vectors, runtime):
    assert fresh_export.is_file()
    assert not list(fresh_export.parent.glob("*.partial"))  # written beside, then renamed
    model = OnnxEmbedding(fresh_export, Path(local_minilm_path()), runtime=runtime)
    vectors = np.asarray(model.get_text_embedding_batch(passages))
    assert vectors.shape == torch_vectors.shape == (len(passages), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)  # bf16 inside, a unit vector out
    assert cosines(vectors, torch_vectors).min() >= 0.99
    # Asked again (another process, the set-up after a first use): the file is reused, not re-exported.
    mtime = fresh_export.stat().st_mtime_ns
    assert export_onnx(Path(local_minilm_path()), fresh_export.parent.parent, "onnx") == fresh_export
    assert fresh_export.stat().st_mtime_ns == mtime


def test_int8_export_is_a_quantized_graph_close_to_pytorch(fresh_export, passages, torch_vectors):
    int8 = export_onnx(Path(local_minilm_path()), fresh_export.parent.parent, "onnx-int8")
    import onnx

    assert int8 != fresh_export and int8.stat().st_size < fresh_export.stat().st_size * 0.75
    ops = {node.op_type for node in onnx.load(str(int8)).graph.node}
    assert "DynamicQuantizeLinear" in ops and "MatMulInteger" in ops  # the projections run in int8
    vectors = np.asarray(OnnxEmbedding(int8, Path(local_minilm_path())).get_text_embedding_batch(passages))
    assert cosines(vectors, torch_vectors).min() >= 0.985


@pytest.mark.parametrize("backend", ["openvino", "onnx", "onnx-int8"])
def test_each_numeric_path_is_its_own_embedding_id(backend):
    torch_id = embed_model_id(load_settings(_env_file=None, embed_backend="torch"))
    assert torch_id == "local:sentence-transformers/all-MiniLM-L6-v2"
    # OpenVINO's id names the precision it computes in on this CPU (bf16 and f32 vectors differ).
    path = f"openvino-{openvino_precision()}" if backend == "openvino" else backend
    assert embed_model_id(load_settings(_env_file=None, embed_backend=backend)) == f"{torch_id}+{path}"
    # The backend belongs to the local model only: a server's vectors keep their id.
    openai = load_settings(_env_file=None, embed_provider="openai", embed_backend=backend)
    assert embed_model_id(openai) == "openai:text-embedding-3-small"


def test_openvino_computes_in_bf16_exactly_where_the_cpu_has_bf16_units():
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    assert openvino_precision() == ("bf16" if flags & {"avx512_bf16", "amx_bf16"} else "f32")


def test_the_set_up_fills_openvinos_compiled_model_cache(fresh_export):
    blobs = list((fresh_export.parent / "openvino-cache").glob("*.blob"))
    assert len(blobs) == 1 and blobs[0].stat().st_size > 1_000_000  # the compiled graph, weights included


def test_an_unknown_runtime_is_one_clear_error(fresh_export):
    with pytest.raises(ConfigError, match="openvino, onnxruntime"):
        OnnxEmbedding(fresh_export, Path(local_minilm_path()), runtime="tensorrt")


def test_the_default_path_matches_pytorch_for_passages_and_queries(lab_settings, passages, torch_vectors):
    assert lab_settings.embed_backend == "openvino"
    model = get_embed_model(lab_settings)
    assert isinstance(model, OnnxEmbedding) and model.runtime == "openvino"
    assert cosines(model.get_text_embedding_batch(passages), torch_vectors).min() >= 0.999
    single = np.asarray([model.get_query_embedding(p) for p in passages])
    assert cosines(single, torch_vectors).min() >= 0.999
    assert cosines(embed_queries(model, passages), single).min() >= 0.9999  # batched = one at a time


def test_threads_sharing_the_default_model_each_get_their_own_vectors(lab_settings, passages):
    """Each thread runs its own infer request (made once per thread): concurrent callers get the vectors
    a lone caller gets, none overwritten by another thread's result."""
    from concurrent.futures import ThreadPoolExecutor

    model = get_embed_model(lab_settings)
    alone = [np.asarray(model.get_query_embedding(p)) for p in passages[:8]]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda p: np.asarray(model.get_query_embedding(p)), passages[:8] * 3))
    for i, vector in enumerate(together):
        assert np.allclose(vector, alone[i % 8], atol=1e-6)


def test_openvino_runs_one_stream_per_core_with_a_pass_in_flight_on_each(lab_settings, fresh_export):
    compiled = openvino_model(str(fresh_export), cpu_threads())
    assert int(compiled.get_property("NUM_STREAMS")) == cpu_threads()
    assert compiled.get_property("INFERENCE_NUM_THREADS") == cpu_threads()  # one thread per stream
    assert compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") == cpu_threads()


def test_passes_run_side_by_side_give_the_vectors_of_one_pass_at_a_time(fresh_export, passages):
    """Streams only schedule the passes: the vectors equal those of one stream running them in turn
    (the same numeric path, hence the same embedding id), each back in its caller's place."""
    model_dir = Path(local_minilm_path())
    side_by_side = OnnxEmbedding(fresh_export, model_dir, batch_size=1, runtime="openvino")
    in_turn = OnnxEmbedding(fresh_export, model_dir, batch_size=1, threads=1, runtime="openvino")
    assert side_by_side._runner.passes_at_once == cpu_threads() and in_turn._runner.passes_at_once == 1
    texts = passages * 3  # more passes than infer requests: requests are reused
    assert np.array_equal(side_by_side.embed_many(texts), in_turn.embed_many(texts))
    alone = np.asarray([in_turn.get_text_embedding(t) for t in passages])
    assert np.array_equal(side_by_side.embed_many(texts), np.concatenate([alone] * 3))


def test_a_call_is_split_so_that_every_stream_gets_a_pass(fresh_export, passages, monkeypatch):
    import rag_lab.models.onnx_embedding as module

    widths = []
    real = module.length_buckets
    monkeypatch.setattr(module, "length_buckets", lambda encodings, size: widths.append(size) or real(encodings, size))
    model = OnnxEmbedding(fresh_export, Path(local_minilm_path()), batch_size=32, runtime="openvino")
    streams = model._runner.passes_at_once
    widths.clear()
    model.embed_many(passages)  # fewer texts than a full pass: shared out over the streams
    model.embed_many(passages * 40)  # enough for full passes on every stream
    assert widths == [-(-len(passages) // streams), 32]


def test_length_buckets_pad_little_and_keep_the_callers_order(lab_settings, passages):
    model = get_embed_model(lab_settings)
    mixed = [passages[0], "a", passages[1], "short question?", passages[2], "b c"]
    encodings = model._tokenizer.encode_batch(mixed)
    batches = length_buckets(encodings, 2)
    assert sorted(p for b in batches for p in b.positions) == list(range(len(mixed)))
    widths = [b.feeds["input_ids"].shape[1] for b in batches]
    assert widths == sorted(widths) and widths[0] < 10 < widths[-1]  # the short texts together
    for batch in batches:
        for row, position in enumerate(batch.positions):
            n = len(encodings[position].ids)
            assert list(batch.feeds["input_ids"][row, :n]) == encodings[position].ids
            assert batch.feeds["attention_mask"][row].sum() == n
    # Vectors come back in the order given: each equals that text embedded alone.
    together = np.asarray(model.get_text_embedding_batch(mixed))
    alone = np.asarray([model.get_text_embedding(t) for t in mixed])
    assert cosines(together, alone).min() >= 0.9999


def test_the_exported_file_is_named_by_variant_and_recipe(tmp_path):
    fp32, int8 = (exported_model_path(tmp_path, v) for v in ("onnx", "onnx-int8"))
    assert fp32 != int8 and fp32.parent == int8.parent
    assert "torch" in fp32.name and "weights" in fp32.name  # a new torch or new weights export anew
