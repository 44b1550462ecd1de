"""rag-lab from Python (notebooks, scripts): the CLI's commands as functions, with the CLI's defaults.

    from rag_lab import api

    api.index("texas_childcare")                              # rag-lab index texas_childcare
    api.search("texas_childcare", "$4,106", mode="bm25")      # rag-lab search … --mode bm25
    answer = api.ask("texas_childcare", "What is …?")         # rag-lab ask …
    run = api.evaluate("texas_childcare", limit=5)            # rag-lab eval … --limit 5
    report = api.ir("scifact", limit=100)                     # rag-lab ir scifact --limit 100
    result = api.ablate("texas_childcare", grid="grid.yaml")  # rag-lab ablate … --grid grid.yaml
    api.report("runs/texas_childcare", "reports/run.html")    # rag-lab report … -o …

Every default is the command's (``tests/cli/test_api_defaults.py`` holds them equal): rerank off
for the local model and on for remote providers (:func:`rag_lab.answer.engine.default_rerank`),
compression from the settings (``RAG_LAB_COMPRESS``), ``top_k`` = chunks the retriever returns per
query (search 5, answering 30 with ``top_n`` = 7 given to the LLM). A dataset is a name under the
datasets folder (``RAG_LAB_DATASETS_DIR``, default ``./datasets``) or a folder path; ``settings``
defaults to the environment's (:func:`rag_lab.config.get_settings`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SEARCH_TOP_K = 5  # `rag-lab search`: results shown
IR_MODES = ("dense", "bm25", "fusion", "hybrid")  # `rag-lab ir --modes`
EVAL_MODES = ("dense", "bm25", "fusion", "hybrid")  # `rag-lab eval --modes`
ASK_MODE = "hybrid"  # `rag-lab ask/search --mode`

# as the CLI does: no "Loading weights" bar from transformers on every model load (a user's setting wins)
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def load_settings(**overrides: Any):
    """The environment's settings (``RAG_LAB_*``, ``.env``), with ``overrides`` (field=value) applied."""
    from rag_lab.config import get_settings

    base = get_settings()
    return base.model_copy(update=overrides) if overrides else base


def load_dataset(name_or_path: Any, settings=None):
    """The :class:`rag_lab.datasets.Dataset` a name (under the datasets folder) or a folder path names."""
    from rag_lab.datasets import Dataset, resolve_dataset

    if isinstance(name_or_path, Dataset):
        return name_or_path
    return resolve_dataset(name_or_path, (settings or load_settings()).datasets_dir)


def index(dataset: Any, *, settings=None, force: bool = False, contextual: str = "none", yes: bool = False,
          progress: bool = False):
    """``rag-lab index DATASET``: build or refresh the index (idempotent); returns a ``BuildResult``."""
    from rag_lab.index import build_index

    s = settings or load_settings()
    return build_index(load_dataset(dataset, s), s, force=force, contextual=contextual, yes=yes, progress=progress)


def search(dataset: Any, query: str, *, mode: str = ASK_MODE, top_k: int = SEARCH_TOP_K, contextual: str = "none",
           explain: bool = False, settings=None, **fusion: Any):
    """``rag-lab search DATASET QUERY``: ranked chunks (LlamaIndex ``NodeWithScore``). ``fusion``:
    rrf_k, prefetch, dense_weight, sparse_weight, max_per_doc, year_boost (as ``--fusion-k`` …)."""
    from rag_lab.retrieve import build_retriever

    s = settings or load_settings()
    ds = None if mode == "kendra" else load_dataset(dataset, s)
    retriever = build_retriever(mode, s, ds, contextual=contextual, top_k=top_k, explain=explain or None,
                                **{k: v for k, v in fusion.items() if v is not None})
    return retriever.retrieve(query)


def answerer(dataset: Any, *, mode: str = ASK_MODE, rerank: bool | None = None, top_k: int | None = None,
             top_n: int | None = None, explain: bool = False, settings=None, llm=None, **params: Any):
    """The answerer behind ``rag-lab ask`` (ask it many questions: its models load once)."""
    from rag_lab.answer import make_answerer

    s = settings or load_settings()
    ds = None if mode == "kendra" or dataset is None else load_dataset(dataset, s)
    options = {k: v for k, v in {"top_k": top_k, "top_n": top_n, **params}.items() if v is not None}
    return make_answerer(mode, s, ds, rerank=rerank, explain=explain, llm=llm, **options)


def ask(dataset: Any, question: str, **options: Any):
    """``rag-lab ask DATASET QUESTION``: one cited :class:`rag_lab.answer.Answer` (options as :func:`answerer`)."""
    return answerer(dataset, **options).query(question)


def evaluate(dataset: Any, modes=EVAL_MODES, out: str | Path | None = None, *, settings=None,
             top_k: int | None = None, top_n: int | None = None, **options: Any):
    """``rag-lab eval DATASET``: answer and score the questions in each mode; returns the loaded run
    (``run.summary``, ``run.samples``, ``run.modes``). ``out`` defaults to ``runs/<dataset>``;
    ``options`` as :func:`rag_lab.evaluate.run_evaluation` (limit, judge, rerank, resume …)."""
    from rag_lab.evaluate import run_evaluation

    s = settings or load_settings()
    ds = load_dataset(dataset, s)
    params = {k: v for k, v in {"top_k": top_k, "top_n": top_n}.items() if v is not None}
    return run_evaluation(ds, s, list(modes), Path(out) if out else Path("runs") / ds.name,
                          **{"progress": False, **options}, **params)


def ir(dataset: Any, modes=IR_MODES, *, settings=None, limit: int | None = None, split: str = "all",
       contextual: str = "none", resume: bool = True, **fusion: Any):
    """``rag-lab ir DATASET``: ranx metrics per mode (an ``IRReport``: ``.results``, ``.per_query``)."""
    from rag_lab.evaluate.retrieval.ir import evaluate_modes

    s = settings or load_settings()
    ds = load_dataset(dataset, s)
    index(ds, settings=s, contextual=contextual)  # no-op when up to date, as the command does
    params = {k: v for k, v in fusion.items() if v is not None}
    return evaluate_modes(ds, s, list(modes), params, progress=False, resume=resume, limit=limit,
                          contextual=contextual, split=split)


def ablate(dataset: Any, out: str | Path | None = None, *, grid: str | Path | dict | None = None,
           settings=None, limit: int | None = None, seed: int = 42, split: str = "all",
           answer_configs: str | None = None, answer_limit: int = 5, concurrency: int | None = None, **axes: Any):
    """``rag-lab ablate DATASET``: the retrieval grid (an ``AblationResult``; ``results.csv`` in ``out``,
    default ``runs/ablation-<dataset>``). The grid: ``grid`` (a YAML/TOML file or a dict, as
    ``--grid``) and/or ``axes`` (modes, fusion_k, prefetch, top_k, weights, max_per_doc as lists);
    the command's defaults otherwise. ``answer_configs`` is ``--answer-configs``' text: None answers
    top-k 3/5/7 at the default k and prefetch (as the command does), ``"none"`` answers nothing."""
    from rag_lab.evaluate.ablation.answers import parse_answer_configs
    from rag_lab.evaluate.ablation.grid_file import grid_spec
    from rag_lab.evaluate.ablation.runner import run_ablation

    s = settings or load_settings()
    ds = load_dataset(dataset, s)
    index(ds, settings=s)
    spec = grid_spec(grid, **axes)
    answered = None if (answer_configs or "").strip().lower() == "none" else parse_answer_configs(answer_configs, spec)
    return run_ablation(ds, s, spec, Path(out) if out else Path(f"runs/ablation-{ds.name}"), limit=limit,
                        progress=False, seed=seed, answer_configs=answered, answer_limit=answer_limit,
                        split=split, concurrency=concurrency)


def report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """``rag-lab report RUN -o FILE``: one self-contained HTML file (default ``reports/<run>.html``)."""
    from rag_lab.report.html import write_report

    return write_report(Path(run_dir), Path(out or f"reports/{Path(run_dir).name}.html"))


def defaults(settings=None) -> dict[str, Any]:
    """The defaults a command applies when a flag is not given, as this module applies them."""
    from rag_lab.answer.engine import DEFAULT_TOP_K, default_rerank
    from rag_lab.answer.rerank import DEFAULT_TOP_N

    s = settings or load_settings()
    return {"rerank": default_rerank(s), "compress": s.compress, "context_lines": s.context_lines,
            "search_top_k": SEARCH_TOP_K, "answer_top_k": DEFAULT_TOP_K, "answer_top_n": DEFAULT_TOP_N,
            "mode": ASK_MODE, "eval_modes": EVAL_MODES, "ir_modes": IR_MODES}
