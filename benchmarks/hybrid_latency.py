"""Hybrid vs fusion vs query embedding alone, per query, in the same run (issue #8's goal:
hybrid p50 ≤ fusion p50, and hybrid within 2× of the query-embedding time).

    PYTHONPATH=. python benchmarks/hybrid_latency.py [--dataset scifact] [--queries 300] [--backend edge]

For each query, interleaved so machine noise hits all three alike: the query embedding alone
(MiniLM on CPU, the irreducible part), plain `hybrid` (embedding + engine-side dense/sparse
prefetch + RRF) and `fusion` (embedding + dense search + bm25s + client-side RRF), all with
top_k 10 and prefetch 100. Prints p50/p95 and the two ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.index import CorpusIndex, build_index
from rag_lab.index.store import close_all
from rag_lab.retrieve.fusion import FusionRetriever
from rag_lab.retrieve.hybrid import HybridRetriever


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--backend", choices=["edge", "local"], default=None, help="default: the configured one")
    args = parser.parse_args()
    settings = load_settings(**({"vector_backend": args.backend} if args.backend else {}))
    dataset = resolve_dataset(args.dataset, settings.datasets_dir)
    build_index(dataset, settings)
    index = CorpusIndex.open(dataset, settings)
    queries = (list(dataset.load_queries().values()) if dataset.kind == "beir"
               else list(dataset.sample_queries))[: args.queries]
    hybrid = HybridRetriever(index, top_k=10, prefetch=100)
    fusion = FusionRetriever(index, top_k=10, prefetch=100)
    embed = index.embed_model
    for q in queries[:3]:  # warm the model, the shard and bm25s
        hybrid.retrieve(q), fusion.retrieve(q), embed.get_query_embedding(q)
    times: dict[str, list[float]] = {"embed": [], "hybrid": [], "fusion": []}
    for query in queries:
        for name, run in (("embed", lambda q: embed.get_query_embedding(q)),
                          ("hybrid", hybrid.retrieve), ("fusion", fusion.retrieve)):
            started = time.perf_counter()
            run(query)
            times[name].append((time.perf_counter() - started) * 1000)
    p50 = {name: statistics.median(values) for name, values in times.items()}
    print(f"{dataset.name}: {len(queries)} queries, {index.manifest.n_chunks} chunks, backend {index.backend}, "
          f"top_k 10, prefetch 100")
    for name, values in times.items():
        print(f"  {name:<7} p50 {p50[name]:7.1f} ms   p95 {_pct(values, 0.95):7.1f} ms")
    print(f"hybrid / fusion p50: {p50['hybrid'] / p50['fusion']:.2f}×  (goal ≤ 1)")
    print(f"hybrid / embedding p50: {p50['hybrid'] / p50['embed']:.2f}×  (goal ≤ 2)")


if __name__ == "__main__":
    try:
        main()
    finally:
        close_all()
