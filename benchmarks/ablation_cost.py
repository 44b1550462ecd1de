"""Cost of the full ablation grid relative to one plain retrieval pass, on the same queries.

    python benchmarks/ablation_cost.py [--dataset scifact] [--limit N]

Full grid: 7 k × 4 prefetch × 4 top-k × 2 modes (fusion, hybrid) = 224 configurations, from a cold
leg cache: each question's legs retrieved once at prefetch 100, every configuration fused, one ranx
evaluate over all of them. Plain pass: the same questions through one retriever at its defaults
(top-k 10, prefetch 100, k 60). Both are printed with their ratio (goal ≤ 1.3× against the mode
whose candidate lists the grid reuses in full, hybrid). The grid embeds its questions in batches;
a plain hybrid pass that does the same is printed too, as the stricter comparison. Significance
tests and CIs are timed separately (they are analysis, not retrieval).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.ablation.grid import GridSpec, compute_grid
from rag_lab.evaluate.ablation.legs import retrieve_legs
from rag_lab.evaluate.ablation.metrics import grid_per_query
from rag_lab.evaluate.ablation.runner import load_questions
from rag_lab.evaluate.ablation.significance import summarise
from rag_lab.index import CorpusIndex, build_index
from rag_lab.index.store import close_all
from rag_lab.retrieve import build_retriever


def plain_pass(mode: str, dataset, settings, queries: dict[str, str]) -> float:
    retriever = build_retriever(mode, settings, dataset, top_k=10)
    retriever.retrieve(next(iter(queries.values())))  # warm the model and the store
    started = time.perf_counter()
    for text in queries.values():
        retriever.retrieve(text)
    return time.perf_counter() - started


def plain_hybrid_batched(dataset, settings, queries: dict[str, str]) -> float:
    """The same plain hybrid pass with every question embedded in batches first (QueryBundle.embedding):
    the fairest baseline for a grid that batches its embeddings too."""
    from llama_index.core.schema import QueryBundle

    from rag_lab.models.embeddings import embed_queries

    retriever = build_retriever("hybrid", settings, dataset, top_k=10)
    retriever.retrieve(next(iter(queries.values())))
    started = time.perf_counter()
    texts = list(queries.values())
    for text, vector in zip(texts, embed_queries(retriever.index.embed_model, texts)):
        retriever.retrieve(QueryBundle(text, embedding=vector))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    settings = load_settings()
    dataset = resolve_dataset(args.dataset, settings.datasets_dir)
    build_index(dataset, settings)
    index = CorpusIndex.open(dataset, settings)
    queries, qrels, references = load_questions(dataset, args.limit)
    spec = GridSpec()  # 7 k × 4 prefetch × 4 top-k × 2 modes

    # Warm-up outside the timings: the embedding model, ranx's numba kernels.
    grid_per_query(compute_grid(retrieve_legs(index, dict(list(queries.items())[:2]), Path(tempfile.mkdtemp()),
                                              spec.modes, spec.depth, progress=False)[0], spec), qrels, references)
    plain = {mode: plain_pass(mode, dataset, settings, queries) for mode in spec.modes}
    batched = plain_hybrid_batched(dataset, settings, queries)

    run_dir = Path(tempfile.mkdtemp(prefix="ablation-cost-"))
    try:
        started = time.perf_counter()
        questions, _ = retrieve_legs(index, queries, run_dir, spec.modes, spec.depth, progress=False)
        legs = time.perf_counter() - started
        started = time.perf_counter()
        grid = compute_grid(questions, spec)
        fused = time.perf_counter() - started
        started = time.perf_counter()
        per_query = grid_per_query(grid, qrels, references)
        scored = time.perf_counter() - started
        started = time.perf_counter()
        summarise(per_query, grid.configs, spec)
        stats = time.perf_counter() - started
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    total = legs + fused + scored
    print(f"{dataset.name}: {len(queries)} questions, {len(grid.configs)} configurations")
    print(f"  legs retrieved once (dense, bm25, sparse @100) {legs:8.2f} s")
    print(f"  every configuration fused (vectorised RRF)     {fused:8.2f} s")
    print(f"  ranx evaluate per top-k (+ RAGAS ID metrics)   {scored:8.2f} s")
    print(f"  full grid                                       {total:8.2f} s")
    for mode, seconds in plain.items():
        print(f"  one plain {mode:<6} pass (top-k 10, prefetch 100) {seconds:8.2f} s   grid / pass = {total / seconds:.2f}×")
    print(f"  one plain hybrid pass, questions batch-embedded {batched:8.2f} s   grid / pass = {total / batched:.2f}×")
    print(f"  (not in the grid time: CIs + significance of every configuration {stats:.2f} s)")
    print(f"full grid / one plain hybrid pass: {total / plain['hybrid']:.2f}×  (goal ≤ 1.3×)")


if __name__ == "__main__":
    try:
        main()
    finally:
        close_all()
