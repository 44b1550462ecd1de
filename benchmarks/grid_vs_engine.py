"""Why (and whether) the ablation grid's hybrid rankings differ from Qdrant's own RRF.

For each question: the deep legs (what ``ablate`` cut before 2026-11-27) and the engine's own
top-p lists at every prefetch (what it keeps now); how often the engine's top-p is the first p of
its deep list (and whether its scores tie); and the live ``hybrid`` retriever against both grids.

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
    legs = LegRetriever(index, ["dense", "sparse"], spec.depth, spec.prefetch)
    questions = [Candidates(qid, legs(text)[0]) for qid, text in queries.items()]
    # the grid as it was: top-p cuts of the deep, id-sorted lists (no engine lists)
    deep_only = [Candidates(q.qid, {leg: q.legs[leg] for leg in ("dense", "sparse")}) for q in questions]
    grids = {"engine lists (now)": compute_grid(questions, spec), "deep-list cuts (before)": compute_grid(deep_only, spec)}

    prefix = Counter()
    for q in questions:
        for p in prefetches:
            for leg in ("dense", "sparse"):
                engine = [c for c, _, _ in q.legs[f"{leg}@{p}"]]
                deep = [c for c, _, _ in q.legs[leg]][:p]
                prefix[(leg, p, "prefix" if engine == deep else "same set" if set(engine) == set(deep) else "other set")] += 1
                scores = [s for _, _, s in q.legs[f"{leg}@{p}"]]
                prefix[(leg, p, "has tied scores")] += len(set(scores)) < len(scores)
    tally: Counter = Counter()
    for config in grids["engine lists (now)"].configs:
        retriever = HybridRetriever(index, top_k=config.top_k, prefetch=config.prefetch, fusion_k=config.k,
                                    dense_weight=config.dense_weight, sparse_weight=config.sparse_weight,
                                    max_per_doc=config.max_per_doc)
        for q in questions:
            live = [r.node.node_id for r in retriever.retrieve(queries[q.qid])]
            for name, grid in grids.items():
                computed = list(grid.chunks[config.id][q.qid])
                verdict = "equal" if live == computed else "same set" if set(live) == set(computed) else "other set"
                tally[(name, config.id, verdict)] += 1
    print(f"{len(questions)} questions of {args.dataset}")
    print("engine's top-p list vs the first p of its deep list (questions):")
    for key, n in sorted(prefix.items()):
        print(f"  {key[0]:6s} p={key[1]:<4d} {key[2]:16s} {n}")
    print("live hybrid vs grid (questions):")
    for key, n in sorted(tally.items()):
        print(f"  {key[0]:24s} {key[1]:40s} {key[2]:10s} {n}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"prefix": {" ".join(map(str, k)): n for k, n in prefix.items()},
                       "live_vs_grid": {" ".join(k): n for k, n in tally.items()}}, handle, indent=1)


if __name__ == "__main__":
    main()
