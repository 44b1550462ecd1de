"""Query latency (p50/p95) of dense, sparse and hybrid search vs collection size, per vector
backend, with build time, memory and disk — on synthetic points shaped like SciFact's chunks.

    PYTHONPATH=. python benchmarks/engine_scale.py                      # 10k and 100k (local mode: 10k)
    PYTHONPATH=. nice -n 5 python benchmarks/engine_scale.py --sizes 1000000 --backends edge \\
        --hnsw-m 8 --ef-construct 32                                    # the 1M point (≈15 min)

Points: 384-d dense vectors (MiniLM's size) drawn around 2,000 cluster centres (so HNSW faces
a realistic neighbourhood structure), and sparse vectors with SciFact-like sparsity — about 110
distinct terms per chunk from a 30,000-term Zipf-like vocabulary (head flattened as by stop-word removal), BM25-like weights, IDF modifier;
queries have 8 terms. Real embeddings would take days here. Each (size, backend) runs in its own
process, so memory (peak RSS) is that configuration's alone. Searches go through rag-lab's own
backend classes (the code the retrievers call), hybrid = dense + sparse prefetch (100 each) and
RRF inside the engine. qdrant-client's local mode is run only up to --local-max points (its
sparse search is brute force in Python).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

DIM = 384
VOCAB = 30_000
DOC_TERMS = 110
QUERY_TERMS = 8
CENTRES = 2_000
BATCH = 2_000


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# Term probabilities ∝ 1/(rank + 200)^1.1: a Zipf tail whose head is flattened as stop-word
# removal flattens it (the most frequent term is in ≈ 1 chunk out of 4, as in SciFact).
_TERM_P = 1.0 / (np.arange(1, VOCAB + 1) + 200.0) ** 1.1
_TERM_P /= _TERM_P.sum()


def _zipf_terms(rng, n_docs: int, n_terms: int) -> np.ndarray:
    """``n_terms`` distinct term ids per row: repeats are replaced by rare ids past the vocabulary."""
    terms = np.sort(rng.choice(VOCAB, size=(n_docs, n_terms), p=_TERM_P), axis=1)
    repeat = np.zeros_like(terms, dtype=bool)
    repeat[:, 1:] = terms[:, 1:] == terms[:, :-1]
    rare = VOCAB + rng.integers(0, 10 * VOCAB, size=terms.shape) * n_terms + np.arange(n_terms)
    return np.where(repeat, rare, terms)


def synthetic_batch(start: int, count: int, centres: np.ndarray, seed: int = 7):
    """Dense vectors, sparse vectors and payloads for points start … start+count-1 (deterministic)."""
    from rag_lab.index.backend import PointData, SparseQuery

    rng = _rng(seed * 1_000_003 + start)
    labels = rng.integers(0, len(centres), count)
    dense = centres[labels] + 0.35 * rng.standard_normal((count, DIM)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    terms = _zipf_terms(rng, count, DOC_TERMS)
    weights = rng.uniform(0.3, 2.2, terms.shape).astype(np.float32)
    dense_rows, term_rows, weight_rows = dense.tolist(), terms.tolist(), weights.tolist()
    points = []
    for i in range(count):
        n = start + i
        points.append(PointData(str(uuid.UUID(int=n + 1)), dense_rows[i], SparseQuery(term_rows[i], weight_rows[i]),
                                {"doc_id": f"d{n}", "chunk_id": f"d{n}#c0", "filename": f"d{n}.txt", "page": None}))
    return points


def synthetic_queries(n: int, centres: np.ndarray):
    from rag_lab.index.backend import SparseQuery

    rng = _rng(99)
    labels = rng.integers(0, len(centres), n)
    dense = centres[labels] + 0.35 * rng.standard_normal((n, DIM)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    terms = np.sort(rng.choice(VOCAB, size=(n, QUERY_TERMS), p=_TERM_P), axis=1)
    sparse = [SparseQuery(np.unique(t).tolist(), [1.0] * len(np.unique(t))) for t in terms]
    return [d.tolist() for d in dense], sparse


def rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def disk_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def run_one(size: int, backend: str, n_queries: int, hnsw_m: int | None, ef_construct: int | None, work: Path) -> dict:
    from rag_lab.fusion import qdrant_rrf_k

    centres = _rng(1).standard_normal((CENTRES, DIM)).astype(np.float32)
    started = time.perf_counter()
    if backend == "edge":
        from rag_lab.index.edge import EdgeBackend, EdgeWriter

        path = work / "edge"
        # A 2 MB indexing threshold: HNSW graphs are built as they would be for a real large corpus.
        writer = EdgeWriter(path, DIM, hnsw_m=hnsw_m, ef_construct=ef_construct, indexing_threshold_kb=2_000)
    else:
        from qdrant_client import QdrantClient

        from rag_lab.index.store import ClientBackend, ClientWriter

        path = work / "qdrant"
        client = QdrantClient(path=str(path))
        writer = ClientWriter(client, "scale", DIM)
    last = time.perf_counter()
    for start in range(0, size, BATCH):
        batch = synthetic_batch(start, min(BATCH, size - start), centres)
        for part in range(0, len(batch), 500):
            writer.upsert(batch[part:part + 500])
        if time.perf_counter() - last > 30:
            print(f"  {backend} {size:,}: {start + len(batch):,} points written", file=sys.stderr, flush=True)
            last = time.perf_counter()
    writer.finish()
    build_s = time.perf_counter() - started
    vectors = EdgeBackend(path) if backend == "edge" else ClientBackend(client, "scale", "local")
    assert vectors.count() == size
    dense_q, sparse_q = synthetic_queries(n_queries, centres)
    timings: dict[str, list[float]] = {"dense": [], "sparse": [], "hybrid": []}
    for i in range(n_queries):
        for mode in ("dense", "sparse", "hybrid"):
            t0 = time.perf_counter()
            if mode == "dense":
                hits = vectors.dense(dense_q[i], 10)
            elif mode == "sparse":
                hits = vectors.sparse(sparse_q[i], 10)
            else:
                hits = vectors.rrf(dense_q[i], sparse_q[i], 100, qdrant_rrf_k(60), [1.0, 1.0], 10)
            timings[mode].append((time.perf_counter() - t0) * 1000)
            assert hits, f"{mode} returned nothing"
    row = {"size": size, "backend": backend, "queries": n_queries, "build_s": round(build_s, 1),
           "rss_mb": round(rss_mb(), 0), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0),
           "disk_mb": round(disk_mb(path), 0), "hnsw_m": hnsw_m, "ef_construct": ef_construct}
    for mode, values in timings.items():
        values.sort()
        row[f"{mode}_p50_ms"] = round(statistics.median(values), 2)
        row[f"{mode}_p95_ms"] = round(values[min(len(values) - 1, int(0.95 * len(values)))], 2)
    vectors.close()
    return row


def print_table(rows: list[dict]) -> None:
    head = (f"{'backend':<7} {'points':>9} {'build s':>8} {'RSS MB':>7} {'disk MB':>8} "
            f"{'dense p50/p95 ms':>17} {'sparse p50/p95 ms':>18} {'hybrid p50/p95 ms':>18}")
    print(head)
    print("-" * len(head))
    for r in rows:
        cell = lambda m: f"{r[m + '_p50_ms']:.1f} / {r[m + '_p95_ms']:.1f}"  # noqa: E731
        print(f"{r['backend']:<7} {r['size']:>9,} {r['build_s']:>8.1f} {r['peak_rss_mb']:>7.0f} {r['disk_mb']:>8.0f} "
              f"{cell('dense'):>17} {cell('sparse'):>18} {cell('hybrid'):>18}")
    by_size = {}
    for r in rows:
        by_size.setdefault(r["size"], {})[r["backend"]] = r
    for size, pair in sorted(by_size.items()):
        if "edge" in pair and "local" in pair:
            ratio = pair["local"]["hybrid_p50_ms"] / pair["edge"]["hybrid_p50_ms"]
            print(f"{size:,} points: hybrid p50 local / edge = {ratio:.0f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--backends", default="edge,local")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--local-max", type=int, default=10_000, help="largest size run on local mode")
    parser.add_argument("--local-queries", type=int, default=20, help="queries on local mode (brute force)")
    parser.add_argument("--hnsw-m", type=int, default=None)
    parser.add_argument("--ef-construct", type=int, default=None)
    parser.add_argument("--json", default=None, help="append rows to this JSON-lines file")
    parser.add_argument("--one", nargs=2, metavar=("SIZE", "BACKEND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        size, backend = int(args.one[0]), args.one[1]
        work = Path(tempfile.mkdtemp(prefix="engine_scale-"))
        try:
            queries = args.queries if backend == "edge" else min(args.queries, args.local_queries)
            print(json.dumps(run_one(size, backend, queries, args.hnsw_m, args.ef_construct, work)))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        for backend in args.backends.split(","):
            if backend == "local" and size > args.local_max:
                print(f"skipping local mode at {size:,} points (> --local-max {args.local_max:,})", file=sys.stderr)
                continue
            cmd = [sys.executable, __file__, "--one", str(size), backend, "--queries", str(args.queries),
                   "--local-queries", str(args.local_queries)]
            if args.hnsw_m:
                cmd += ["--hnsw-m", str(args.hnsw_m)]
            if args.ef_construct:
                cmd += ["--ef-construct", str(args.ef_construct)]
            print(f"running {backend} at {size:,} points …", file=sys.stderr, flush=True)
            done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=os.environ.copy())
            if done.returncode != 0:
                print(f"  {backend} at {size:,} failed (exit {done.returncode})", file=sys.stderr)
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            if args.json:
                with open(args.json, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(row) + "\n")
    print_table(rows)


if __name__ == "__main__":
    main()
