"""Evaluation: run modes over questions, score with RAGAS (and ranx), keep every result.

The Python API (the CLI is a thin wrapper)::

    from rag_lab.evaluate import run_evaluation, load_run
    run = run_evaluation("texas_childcare", modes=["bm25", "hybrid"], out="runs/try", limit=10)
    run.summary, run.samples, run.modes, run.table()
"""

import os

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before anything imports ragas


def __getattr__(name):  # lazy: `import rag_lab.evaluate.retrieval.ir` must not pull pandas and ragas
    if name in ("run_evaluation", "questions"):
        from rag_lab.evaluate.run import runner

        return getattr(runner, name)
    if name in ("load_run", "EvalRun"):
        from rag_lab.evaluate.store import frames

        return getattr(frames, name)
    raise AttributeError(name)


__all__ = ["EvalRun", "load_run", "questions", "run_evaluation"]
