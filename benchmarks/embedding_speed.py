"""Local embedding speed: plain sentence-transformers against the lab's path, side by side.

    PYTHONPATH=. nice -n 5 python benchmarks/embedding_speed.py [--passages 800] [--repeats 3]
        [--backends openvino,onnx,onnx-int8]

Both embed the same SciFact passages (the index's chunks, in corpus order) in one process:
``SentenceTransformer(all-MiniLM-L6-v2).encode`` with its defaults (PyTorch fp32, batch 32,
normalised) and ``get_embed_model`` with each ``RAG_LAB_EMBED_BACKEND`` given, as an index build calls
it (``get_text_embedding_batch`` over the build's cache batches). The runs alternate (sentence-
transformers, then each backend, ``--repeats`` times), so a neighbour's load on shared cores falls on
all of them alike: the ratio per round (sentence-transformers seconds / lab seconds) is the result,
its median printed beside the passages/s of each. Sentence-transformers' passages/s is the machine's
reference figure (with the load average printed before and after: on shared cores both sides slow
down, the ratio less so). Agreement: cosine of each passage's vector with sentence-transformers' (min
and mean). Weights load, the ONNX export and graph compilation happen before any timing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import datetime, timezone

import numpy as np

os.environ["HF_HUB_OFFLINE"] = os.environ["TRANSFORMERS_OFFLINE"] = "1"


def scifact_passages(settings, n: int) -> list[str]:
    from rag_lab.datasets import resolve_dataset
    from rag_lab.ingest import chunk_documents

    dataset = resolve_dataset("scifact", settings.datasets_dir)
    documents, _ = dataset.load_documents()
    nodes = chunk_documents(documents, settings.chunk_words, settings.chunk_overlap_words)
    return [node.get_content() for node in nodes[:n]]


def lab_embedder(settings, backend: str):
    """``texts → vectors`` as ``rag_lab.index.build.embed_nodes`` calls the model (its batches)."""
    from rag_lab.models import get_embed_model

    model = get_embed_model(settings.model_copy(update={"embed_backend": backend}))
    part = max(settings.embed_batch_size, 1) * 2

    def embed(texts: list[str]) -> np.ndarray:
        ordered = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # as the build orders its misses
        vectors = np.empty((len(texts), 384), dtype=np.float32)
        for start in range(0, len(ordered), part):
            rows = ordered[start:start + part]
            vectors[rows] = model.get_text_embedding_batch([texts[i] for i in rows])
        return vectors

    return embed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=800)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backends", default="openvino,onnx,onnx-int8",
                        help="RAG_LAB_EMBED_BACKEND values (comma-separated)")
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    from rag_lab.config import load_settings
    from rag_lab.models.embeddings import embed_model_id, local_minilm_path
    from rag_lab.models.onnx_embedding import cpu_threads

    settings = load_settings()
    load_before = os.getloadavg()
    texts = scifact_passages(settings, args.passages)
    plain = SentenceTransformer(local_minilm_path(), device="cpu")
    runs = {"sentence-transformers (torch fp32)": lambda t: plain.encode(t, normalize_embeddings=True)}
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        lab_id = embed_model_id(settings.model_copy(update={"embed_backend": backend})).split("+")[-1]
        default = " (default)" if backend == type(settings).model_fields["embed_backend"].default else ""
        runs[f"rag-lab {lab_id}{default}"] = lab_embedder(settings, backend)
    for embed in runs.values():
        embed(texts[:8])  # weights, graph optimisation, first-call allocations: outside the timings

    seconds: dict[str, list[float]] = {name: [] for name in runs}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.repeats):
        for name, embed in runs.items():
            started = time.perf_counter()
            vectors[name] = np.asarray(embed(texts), dtype=np.float32)
            seconds[name].append(time.perf_counter() - started)

    baseline = next(iter(runs))
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {len(texts)} SciFact passages "
          f"(chunks of {settings.chunk_words} words, truncated at 256 tokens); {args.repeats} interleaved rounds; "
          f"torch threads {torch.get_num_threads()}, OpenVINO/ONNX Runtime threads {cpu_threads()}, "
          f"cores {os.cpu_count()}; "
          f"load average (1 min) {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{'path':<40}{'passages/s (best)':>19}{'median':>9}{'ratio (median)':>16}{'cos min':>10}{'cos mean':>10}")
    for name in runs:
        ratios = [b / s for b, s in zip(seconds[baseline], seconds[name])]
        cosines = (vectors[name] * vectors[baseline]).sum(axis=1)
        print(f"{name:<40}{len(texts) / min(seconds[name]):>19.1f}{len(texts) / statistics.median(seconds[name]):>9.1f}"
              f"{statistics.median(ratios):>15.2f}×{cosines.min():>10.5f}{cosines.mean():>10.5f}")
    print("ratio = sentence-transformers' seconds / this path's seconds in the same round (median over rounds)")


if __name__ == "__main__":
    main()
