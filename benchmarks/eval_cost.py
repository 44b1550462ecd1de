"""What an evaluation costs: seconds per sample per mode, and the share spent in retrieval,
(rerank,) generation and scoring, from a fresh run folder (no answer cache hits counted).

    PYTHONPATH=. python benchmarks/eval_cost.py [--dataset texas_childcare] [--limit 3]
                                               [--modes dense,bm25,fusion,hybrid] [--no-rerank] [--top-n N]

Uses run_evaluation with the configured (default: offline) models; the answer cache lives in a
temporary data dir so every sample is really generated. Scoring covers every offline metric.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from rag_lab.config import load_settings
from rag_lab.evaluate import run_evaluation
from rag_lab.index.store import close_all

STAGES = ("retrieve", "rerank", "generate", "score")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare")
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--modes", default="dense,bm25,fusion,hybrid")
    parser.add_argument("--no-rerank", action="store_true")
    parser.add_argument("--top-n", type=int, default=None, help="chunks per prompt (default: the engines')")
    args = parser.parse_args()
    params = {"top_n": args.top_n} if args.top_n else {}
    base = load_settings()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        (data / "cache").mkdir(parents=True)
        for name in ("embeddings.sqlite", "parsed.sqlite"):  # index build from caches; answers uncached
            if (base.cache_dir / name).exists():
                shutil.copy(base.cache_dir / name, data / "cache" / name)
        settings = base.model_copy(update={"data_dir": data})
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        # Warm-up: load the models (LLM, embeddings) outside the timed samples.
        run_evaluation(args.dataset, settings, modes[:1], Path(tmp) / "warm", limit=1, rerank=not args.no_rerank,
                       progress=False, **params)
        run = run_evaluation(args.dataset, settings, modes, Path(tmp) / "run", limit=args.limit + 1,
                             rerank=not args.no_rerank, progress=False, **params)
        print(f"{args.dataset}: {args.limit} samples per mode, rerank={'off' if args.no_rerank else 'on'}, "
              f"LLM {run.manifest['models']['llm']}")
        print(f"{'mode':<8}{'s/sample':>10}" + "".join(f"{s:>10}" for s in STAGES))
        for mode in modes:
            # The first sample (answered in the warm-up for modes[0]) is skipped: fresh only.
            records = [r for r in run.records[mode] if not r.get("cached") and not r.get("error")][-args.limit:]
            totals = [r["latency"].get("total", 0.0) + r["latency"].get("score", 0.0) for r in records]
            per = sum(totals) / len(totals) if totals else float("nan")
            shares = []
            for stage in STAGES:
                spent = sum(r["latency"].get(stage, 0.0) for r in records)
                shares.append(f"{spent / sum(totals):>10.0%}" if totals and sum(totals) else f"{'—':>10}")
            print(f"{mode:<8}{per:>10.2f}" + "".join(shares))
        close_all()  # release the local Qdrant before the temporary data dir goes


if __name__ == "__main__":
    main()
