"""Time of hybrid retrieval with explanations over plain hybrid, on the same queries.

    python benchmarks/explain_overhead.py [--dataset scifact] [--queries 100] [--repeats 3]

Plain: one ``query_points`` with two prefetches fused by Qdrant. Explain: one batched request
for the same two candidate lists, fused and explained client side. The two are interleaved query
by query so machine noise hits both alike; the ratio of total times is printed (goal ≤ 1.15×).
"""

from __future__ import annotations

import argparse
import time

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.index.store import close_all
from rag_lab.index import CorpusIndex, build_index
from rag_lab.retrieve.hybrid import HybridRetriever


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--prefetch", type=int, default=100)
    args = parser.parse_args()
    settings = load_settings()
    dataset = resolve_dataset(args.dataset, settings.datasets_dir)
    build_index(dataset, settings)
    index = CorpusIndex.open(dataset, settings)
    if dataset.kind == "beir":
        queries = list(dataset.load_queries().values())[: args.queries]
    else:
        queries = list(dataset.sample_queries) or ["overview"]
    plain = HybridRetriever(index, top_k=args.top_k, prefetch=args.prefetch)
    explained = HybridRetriever(index, top_k=args.top_k, prefetch=args.prefetch, explain=True)
    # Query embeddings are cached by neither retriever; warm the model and Qdrant once.
    plain.retrieve(queries[0]), explained.retrieve(queries[0])
    totals = {"plain": 0.0, "explain": 0.0}
    for _ in range(args.repeats):
        for query in queries:
            for name, retriever in (("plain", plain), ("explain", explained)):
                started = time.perf_counter()
                retriever.retrieve(query)
                totals[name] += time.perf_counter() - started
    n = len(queries) * args.repeats
    print(f"{dataset.name}: {len(queries)} queries × {args.repeats}, top_k={args.top_k}, prefetch={args.prefetch}")
    for name, total in totals.items():
        print(f"  {name:<8} {1000 * total / n:8.2f} ms/query")
    print(f"explain / plain: {totals['explain'] / totals['plain']:.3f}×  (goal ≤ 1.15×)")


if __name__ == "__main__":
    try:
        main()
    finally:
        close_all()  # local-mode Qdrant must close before interpreter shutdown
