"""Why (and whether) the ablation grid's hybrid rankings differ from Qdrant's own RRF.

For each question: both legs once at the deepest prefetch (what ``ablate`` caches), the grid's fused
top-k from their prefixes, and the live ``hybrid`` retriever at every prefetch. Where they differ it
says which stage differs: the engine's dense/sparse prefetch at limit p against the cached leg's
top-p (exact search or not), and the engine's fused scores against ours.

    RAG_LAB_DATA_DIR=/work/main/.rag_lab PYTHONPATH=. .venv/bin/python benchmarks/grid_vs_engine.py \
        texas_childcare_full --questions 30 --prefetch 10,25,50,100 [--weights 1:1,0:1]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--prefetch", default="10,25,50,100")
    parser.add_argument("--weights", default="1:1")
    parser.add_argument("--k", type=int, default=60)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--cap", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    from rag_lab.config import get_settings
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.ablation.grid import GridSpec, compute_grid
    from rag_lab.evaluate.ablation.legs import LegRetriever
    from rag_lab.evaluate.ablation.grid import Candidates
    from rag_lab.index import CorpusIndex
    from rag_lab.retrieve.hybrid import HybridRetriever

    settings = get_settings()
    dataset = resolve_dataset(args.dataset, settings.datasets_dir)
    index = CorpusIndex.open(dataset, settings)
    queries, _ = dataset.judged_queries(args.questions)
    prefetches = tuple(int(p) for p in args.prefetch.split(","))
    weights = tuple(tuple(float(x) for x in w.split(":")) for w in args.weights.split(","))
    spec = GridSpec(modes=("hybrid",), fusion_k=(args.k,), prefetch=prefetches, top_k=(args.top_k,),
                    weights=weights, max_per_doc=(args.cap,), default_k=args.k)
    legs = LegRetriever(index, ["dense", "sparse"], spec.depth)
    questions = []
    for qid, text in queries.items():
        found, _ = legs(text)
        questions.append(Candidates(qid, found))
    grid = compute_grid(questions, spec)

    tally: Counter = Counter()
    examples = []
    for config in grid.configs:
        retriever = HybridRetriever(index, top_k=config.top_k, prefetch=config.prefetch, rrf_k=config.k,
                                    dense_weight=config.dense_weight, sparse_weight=config.sparse_weight,
                                    max_per_doc=config.max_per_doc)
        for q in questions:
            live = [r.node.node_id for r in retriever.retrieve(queries[q.qid])]
            computed = list(grid.chunks[config.id][q.qid])
            equal = live == computed
            tally[(config.id, "equal" if equal else ("same set" if set(live) == set(computed) else "other set"))] += 1
            if equal:
                continue
            dense_vec, sparse_q = retriever._query_vectors(queries[q.qid])
            p = config.prefetch
            engine_dense = [h.id for h in index.vectors.dense(dense_vec, p, with_payload=False)]
            engine_sparse = [h.id for h in index.vectors.sparse(sparse_q, p, with_payload=False)] if sparse_q else []
            cached_dense = [c for c, _, _ in q.legs["dense"][:p]]
            cached_sparse = [c for c, _, _ in q.legs["sparse"][:p]]
            examples.append({
                "config": config.id, "qid": q.qid, "live": live, "grid": computed,
                "dense_prefetch_equal_as_set": set(engine_dense) == set(cached_dense),
                "dense_prefetch_equal_in_order": engine_dense == cached_dense,
                "sparse_prefetch_equal_as_set": set(engine_sparse) == set(cached_sparse),
                "sparse_prefetch_equal_in_order": engine_sparse == cached_sparse,
                "dense_only_in_engine": sorted(set(engine_dense) - set(cached_dense)),
                "dense_only_in_cache": sorted(set(cached_dense) - set(engine_dense)),
            })
    for (config, verdict), n in sorted(tally.items()):
        print(f"{config:45s} {verdict:10s} {n}")
    for e in examples[:8]:
        print(json.dumps({k: v for k, v in e.items() if k not in ("live", "grid")}))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"tally": {f"{c} {v}": n for (c, v), n in tally.items()}, "examples": examples}, handle, indent=1)


if __name__ == "__main__":
    main()
