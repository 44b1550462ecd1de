"""Set-up step: compile ranx's numba kernels once (they cache to disk), join and verify the
default local LLM's weights (once, into the data folder)."""

from __future__ import annotations

import os
import warnings

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


def prepare_local_llm() -> None:
    from rag_lab.config import get_settings
    from rag_lab.errors import ConfigError
    from rag_lab.models.llm.catalog import resolve_model_file

    settings = get_settings()
    if settings.llm_provider != "local":
        return
    try:
        path, info = resolve_model_file(settings.llm_model_name, settings.data_dir)
    except ConfigError as exc:  # reported, not fatal: the CLI says the same when the model is used
        print(f"rag-lab set-up: local LLM not ready: {exc}")
        return
    print(f"rag-lab set-up: local LLM {info.name} ({info.quantization}) verified at {path}")


def main() -> None:
    prepare_local_llm()
    try:
        from ranx import Qrels, Run, evaluate, fuse
    except ImportError:  # ranx is optional at this point of set-up
        return
    from numba.core.errors import NumbaTypeSafetyWarning

    from rag_lab.evaluate.retrieval.ranx_ids import fixed_width_ids

    run_ids, qrels_ids = fixed_width_ids({"q1": {"d1": 1.0, "d2": 0.5}}, {"q1": {"d1": 1}})  # the ids rag-lab passes
    qrels, run = Qrels(qrels_ids), Run(run_ids)
    with warnings.catch_warnings():
        # Not ours to fix: ranx 0.3.21's parallel nDCG kernel (ranx/metrics/ndcg.py, `_ndcg_parallel`)
        # indexes a numba typed List with prange's uint64 counter, and numba flags that cast while
        # compiling. The counter runs over 0 … len-1, so the cast is exact. Only this warning, only
        # during this one-off compilation, is silenced; every other warning still shows.
        warnings.filterwarnings("ignore", message=r".*unsafe cast from uint64 to int64", category=NumbaTypeSafetyWarning)
        evaluate(qrels, run, ["ndcg@10", "recall@100", "mrr@10"])
        evaluate(qrels, run, ["ndcg", "recall", "precision", "mrr"])  # the ablation grid's (no cut-off: top-k lists)
        evaluate(qrels, run, ["hit_rate@5"])  # contextual retrieval's comparison (notebook 07)
    fuse([run, run], method="rrf")
    print("rag-lab set-up: ranx kernels compiled")


if __name__ == "__main__":
    main()
