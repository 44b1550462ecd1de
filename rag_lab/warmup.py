"""Set-up step: compile ranx's numba kernels once (they cache to disk), check offline models."""

from __future__ import annotations

import os

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


def main() -> None:
    try:
        from ranx import Qrels, Run, evaluate, fuse
    except ImportError:  # ranx is optional at this point of set-up
        return
    qrels = Qrels({"q1": {"d1": 1}})
    run = Run({"q1": {"d1": 1.0, "d2": 0.5}})
    evaluate(qrels, run, ["ndcg@10", "recall@100", "mrr@10"])
    fuse([run, run], method="rrf")
    print("rag-lab set-up: ranx kernels compiled")


if __name__ == "__main__":
    main()
