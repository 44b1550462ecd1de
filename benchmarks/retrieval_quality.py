"""SciFact retrieval quality of every mode beside the published anchors.

    python benchmarks/retrieval_quality.py [--dataset scifact] [--sweep]

Runs are checkpointed (see rag_lab.evaluate.retrieval.ir), so a second call only re-scores. ``--sweep``
adds fusion/hybrid rows for several RRF k values and leg weights, to show how sensitive the
fused modes are.
"""

from __future__ import annotations

import argparse

from rag_lab.cli.render import render_ir_table
from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.retrieval.ir import SCIFACT_ANCHORS, evaluate_modes
from rag_lab.index.store import close_all
from rag_lab.index import build_index

SWEEP = [
    {"fusion_k": 1}, {"fusion_k": 10}, {"fusion_k": 60}, {"fusion_k": 100},
    {"fusion_k": 60, "dense_weight": 0.7, "sparse_weight": 1.3},
    {"fusion_k": 60, "dense_weight": 1.3, "sparse_weight": 0.7},
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--sweep-modes", default="fusion,hybrid", help="modes to sweep (hybrid is slow in local mode)")
    args = parser.parse_args()
    settings = load_settings()
    dataset = resolve_dataset(args.dataset, settings.datasets_dir)
    build_index(dataset, settings)
    report = evaluate_modes(dataset, settings, ["bm25", "dense", "fusion", "hybrid"])
    rows = dict(report.results)
    if args.sweep:
        for params in SWEEP:
            label = ",".join(f"{k.split('_')[0]}={v}" for k, v in params.items())
            for mode in [m.strip() for m in args.sweep_modes.split(",") if m.strip()]:
                rows[f"{mode}[{label}]"] = evaluate_modes(dataset, settings, [mode], params).results[mode]
    anchors = SCIFACT_ANCHORS if dataset.name == "scifact" else None
    print(render_ir_table(rows, title=f"{dataset.name} test: nDCG@10 etc. (ranx), RRF k=60 ranks from 1, prefetch 100", anchors=anchors))


if __name__ == "__main__":
    try:
        main()
    finally:
        close_all()  # local-mode Qdrant must close before interpreter shutdown
