"""Set-up step: compile ranx's numba kernels once (they cache to disk), join and verify the
default local LLM's weights (once per machine, into the models folder every data folder shares), export
the local embedding model to ONNX (once, from its shipped weights)."""

from __future__ import annotations

import os
import warnings

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


def prepare_local_llm() -> None:
    from rag_lab.config import get_settings
    from rag_lab.errors import ConfigError
    from rag_lab.models.llm.catalog import resolve_model_file

    settings = get_settings()
    if not settings.llm_is_local:
        return
    try:
        path, info = resolve_model_file(settings.llm_model_name, settings.models_dir)
    except ConfigError as exc:  # reported, not fatal: the CLI says the same when the model is used
        print(f"rag-lab set-up: local LLM not ready: {exc}")
        return
    print(f"rag-lab set-up: local LLM {info.name} ({info.quantization}) verified at {path}")


def prepare_local_embedding() -> None:
    import time

    from rag_lab.config import EMBED_PROVIDERS, get_settings
    from rag_lab.errors import ConfigError
    from rag_lab.models.embeddings import local_minilm_path
    from rag_lab.models.onnx_embedding import (
        EXPORTED_GRAPH,
        cpu_threads,
        export_onnx,
        exported_model_path,
        openvino_model,
    )

    settings = get_settings()
    if not EMBED_PROVIDERS[settings.embed_provider].local or settings.embed_backend == "torch":
        return
    try:
        model_dir = local_minilm_path()
    except ConfigError as exc:  # reported, not fatal: the CLI says the same when the model is used
        print(f"rag-lab set-up: local embedding model not ready: {exc}")
        return
    target = exported_model_path(settings.models_dir, EXPORTED_GRAPH[settings.embed_backend])
    if target.exists():
        print(f"rag-lab set-up: local embedding model ({settings.embed_backend}) at {target}")
    else:
        started = time.perf_counter()
        target = export_onnx(model_dir, settings.models_dir, EXPORTED_GRAPH[settings.embed_backend])
        print(f"rag-lab set-up: local embedding model exported ({settings.embed_backend}, "
              f"{time.perf_counter() - started:.0f} s) to {target}")
    if settings.embed_backend == "openvino":  # fills OpenVINO's compiled-model cache: the first query loads it
        openvino_model(str(target), cpu_threads())


def compile_ranx(part: str) -> None:
    """Compile (and cache on disk) the ranx kernels rag-lab calls: ``metrics`` or ``fusion``."""
    from numba.core.errors import NumbaTypeSafetyWarning
    from ranx import Run, fuse

    from rag_lab.evaluate.retrieval.ranx_ids import fixed_width_ids, score_run

    run_docs, qrels = {"q1": {"d1": 1.0, "d2": 0.5}}, {"q1": {"d1": 1}}
    with warnings.catch_warnings():
        # Not ours to fix: ranx 0.3.21's parallel kernels (`_ndcg_parallel` in ranx/metrics/ndcg.py, the
        # min-max normalisation before fusion) index a numba typed List with prange's uint64 counter, and
        # numba flags that cast while compiling. The counter runs over 0 … len-1, so the cast is exact.
        # Only this warning, only during this one-off compilation, is silenced.
        warnings.filterwarnings("ignore", message=r".*unsafe cast from uint64 to int64", category=NumbaTypeSafetyWarning)
        if part == "fusion":
            run = Run(fixed_width_ids(run_docs, qrels)[0])  # the ids rag-lab passes
            fuse([run, run], method="rrf")
            return
        score_run(run_docs, qrels, ["ndcg@10", "recall@100", "mrr@10"])
        score_run(run_docs, qrels, ["ndcg", "recall", "precision", "mrr"])  # the ablation grid's (no cut-off: top-k lists)
        score_run(run_docs, qrels, ["hit_rate@5"])  # contextual retrieval's comparison (notebook 07)


def main(argv: list[str] | None = None) -> None:
    import subprocess
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--ranx-part"]:
        compile_ranx(argv[1])
        return
    try:
        import ranx  # noqa: F401
    except ImportError:  # ranx is optional at this point of set-up
        prepare_local_llm()
        prepare_local_embedding()
        return
    # numba compiles on one core: the fusion kernels compile in a second process beside the metrics
    # (measured 73 s → 51 s on 2 cores; numba writes each cache file atomically, so both may write)
    fusion = subprocess.Popen([sys.executable, "-m", "rag_lab.warmup", "--ranx-part", "fusion"])
    prepare_local_llm()
    prepare_local_embedding()
    compile_ranx("metrics")
    if fusion.wait() != 0:
        raise SystemExit(f"rag-lab set-up: compiling ranx's fusion kernels failed (exit {fusion.returncode})")
    print("rag-lab set-up: ranx kernels compiled")


if __name__ == "__main__":
    main()
