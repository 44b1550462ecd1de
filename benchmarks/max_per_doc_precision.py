"""Why `--max-per-doc 1` lowers id_context_precision: a per-question decomposition.

    PYTHONPATH=. python benchmarks/max_per_doc_precision.py [--split dev] [--top-k 5] [--out DIR]

The grid's id_context_precision is RAGAS's ID-based context precision of the *documents* folded from
a configuration's top-k chunks: relevant distinct documents / distinct documents. For each question
this compares the same configuration without a cap and with cap 1 (the grid's own legs, fusion and
the cap, `rag_lab.evaluate.ablation`), and counts:

- how often a chunk of the source document leaves the top-k (the source had ≥ 2 chunks there; the
  cap keeps its best one);
- how often the number of distinct documents changes (the cap fills the top-k with other documents);
- how the precision change splits: questions whose source document is in both lists (the change is
  the denominator only: 1/n_capped − 1/n_uncapped), questions whose source the cap brings in,
  questions where it is in neither (precision 0 both times).

Reads the leg cache of ``--out`` (made by `rag-lab ablate … --out DIR`, or filled here).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.ablation.grid import Config, GridSpec, compute_grid
from rag_lab.evaluate.ablation.legs import retrieve_legs
from rag_lab.evaluate.ablation.metrics import context_per_query
from rag_lab.evaluate.ablation.runner import load_questions
from rag_lab.index import CorpusIndex


def decompose(grid, doc_of: dict[str, str], spec: GridSpec, references: dict[str, list[str]], mode: str,
              top_k: int) -> dict:
    k, prefetch, (wd, ws) = spec.fusion_k[0], spec.prefetch[0], spec.weights[0]
    plain, capped = Config(mode, k, prefetch, wd, ws, top_k, 0).id, Config(mode, k, prefetch, wd, ws, top_k, 1).id
    scores = context_per_query({plain: grid.docs[plain], capped: grid.docs[capped]}, references)
    counts = {"questions": 0, "source_chunk_leaves": 0, "distinct_docs_change": 0,
              "only_distinct_docs_change": 0, "precision_falls": 0, "precision_falls_no_source_chunk_leaves": 0,
              "source_in_both": 0, "source_enters": 0, "source_leaves": 0,
              "source_in_neither": 0}
    delta = {"source_in_both": [], "source_enters": [], "source_in_neither": [], "source_leaves": []}
    for qid, reference in references.items():
        if qid not in grid.docs[plain]:
            continue
        counts["questions"] += 1
        relevant = set(reference)
        before, after = grid.docs[plain][qid], grid.docs[capped][qid]
        source_chunks_before = sum(doc_of[c] in relevant for c in grid.chunks[plain][qid])
        source_chunks_after = sum(doc_of[c] in relevant for c in grid.chunks[capped][qid])
        leaves = source_chunks_after < source_chunks_before
        changes = len(after) != len(before)
        counts["source_chunk_leaves"] += leaves
        counts["distinct_docs_change"] += changes
        counts["only_distinct_docs_change"] += changes and not leaves
        inside = (bool(relevant & set(before)), bool(relevant & set(after)))
        case = {(True, True): "source_in_both", (False, True): "source_enters", (True, False): "source_leaves",
                (False, False): "source_in_neither"}[inside]
        counts[case] += 1
        change = scores[capped]["id_context_precision"][qid] - scores[plain]["id_context_precision"][qid]
        delta[case].append(change)
        counts["precision_falls"] += change < 0
        counts["precision_falls_no_source_chunk_leaves"] += change < 0 and not leaves
    n = counts["questions"]
    mean_delta = {case: (float(np.sum(values)) / n if n else 0.0) for case, values in delta.items()}
    return {"mode": mode, "configs": [plain, capped], **counts,
            "precision": {"uncapped": float(np.mean(list(scores[plain]["id_context_precision"].values()))),
                          "capped": float(np.mean(list(scores[capped]["id_context_precision"].values())))},
            "mean_distinct_docs": {"uncapped": float(np.mean([len(grid.docs[plain][q]) for q in references])),
                                   "capped": float(np.mean([len(grid.docs[capped][q]) for q in references]))},
            "delta_share_by_case": mean_delta}  # each case's contribution to the mean Δ (sums to the Δ)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare_full")
    parser.add_argument("--split", default="dev", choices=("all", "dev", "rest"))
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--modes", default="fusion,hybrid")
    parser.add_argument("--out", type=Path, default=None, help="leg cache folder (default: a temporary one)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    settings = load_settings()
    dataset = resolve_dataset(args.dataset, settings.datasets_dir)
    index = CorpusIndex.open(dataset, settings)
    queries, _qrels, references = load_questions(dataset, None, args.split)
    modes = tuple(m for m in args.modes.split(",") if m)
    spec = GridSpec(modes=modes, fusion_k=(60,), prefetch=(100,), top_k=(args.top_k,), max_per_doc=(0, 1))
    out = args.out or Path(tempfile.mkdtemp(prefix="max_per_doc_"))
    questions, _ = retrieve_legs(index, queries, out, spec.modes, spec.depth, progress=False)
    grid = compute_grid(questions, spec)
    doc_of = {chunk: doc for q in questions for leg in q.legs.values() for chunk, doc, _ in leg}
    rows = [decompose(grid, doc_of, spec, references, mode, args.top_k) for mode in modes]
    for row in rows:
        n = row["questions"]
        print(f"{args.dataset} {args.split} ({n} questions), {row['mode']} k 60 prefetch 100 top-k {args.top_k}: "
              f"id_context_precision {row['precision']['uncapped']:.3f} → {row['precision']['capped']:.3f} "
              f"(Δ {row['precision']['capped'] - row['precision']['uncapped']:+.3f}); distinct documents "
              f"{row['mean_distinct_docs']['uncapped']:.2f} → {row['mean_distinct_docs']['capped']:.2f}")
        print(f"  a source chunk leaves the top-{args.top_k}: {row['source_chunk_leaves']} of {n}; the distinct-document "
              f"count changes: {row['distinct_docs_change']} of {n} (without a source chunk leaving: "
              f"{row['only_distinct_docs_change']})")
        print(f"  precision falls: {row['precision_falls']} of {n} (with no source chunk leaving: "
              f"{row['precision_falls_no_source_chunk_leaves']})")
        print("  source document in both lists: {source_in_both}, brought in by the cap: {source_enters}, "
              "dropped: {source_leaves}, in neither: {source_in_neither}".format(**row))
        print("  share of the mean Δ: " + ", ".join(f"{case} {value:+.3f}" for case, value in row["delta_share_by_case"].items()))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
