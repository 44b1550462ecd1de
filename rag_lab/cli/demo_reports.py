"""The demo's report step: mode comparison + retrieval ablation grid per dataset, HTML reports.

For each dataset: the index (idempotent), the retrieval ablation grid (legs retrieved once per
question and cached in ``runs/demo-<dataset>-ablation``; reruns cost only the fusion and scoring),
the mode comparison on every judged question (ranx, checkpointed: ``runs/demo-<dataset>-ir``), the
small answer-level evaluation — every mode answering ``answer_limit`` questions through the
evaluation runner, answers cached — where the dataset has Q&A pairs, and one self-contained HTML
report per run. Prints every report's path.
"""

from __future__ import annotations

import time
from pathlib import Path

DEMO_DATASETS = ("texas_childcare_full", "scifact")


def run_reports(settings, dataset_names=DEMO_DATASETS, answer_limit: int = 3, out_root: Path = Path("runs"),
                reports_dir: Path = Path("reports")) -> list[Path]:
    from rag_lab.cli.ablate import render_summary
    from rag_lab.datasets import resolve_dataset
    from rag_lab.errors import DatasetError
    from rag_lab.evaluate.ablation import run_ablation
    from rag_lab.evaluate.ablation.grid import GridSpec
    from rag_lab.index import build_index
    from rag_lab.report.html import write_report

    written: list[Path] = []
    for name in dataset_names:
        try:
            dataset = resolve_dataset(name, settings.datasets_dir)
        except DatasetError as exc:
            print(f"({name} skipped: {exc})")
            continue
        started = time.perf_counter()
        build_index(dataset, settings)
        run_dir = out_root / f"demo-{dataset.name}-ablation"
        # Retrieval only: the answer-level evaluation is the mode comparison's (one LLM pass, not two).
        # the demo's own folder: a grid or index changed since the last demo moves the old run aside
        result = run_ablation(dataset, settings, GridSpec(), run_dir, answer_configs=None, force=True)
        print(render_summary(result))
        written.append(write_report(run_dir, reports_dir / f"{run_dir.name}.html"))
        written.append(write_report(_ir_comparison(dataset, settings, out_root), reports_dir / f"demo-{dataset.name}-ir.html"))
        evaluation = _mode_comparison(dataset, settings, out_root, answer_limit)
        if evaluation is not None:
            written.append(write_report(evaluation, reports_dir / f"{evaluation.name}.html"))
        print(f"[{dataset.name}] done in {time.perf_counter() - started:.0f}s")
    print("\nHTML reports:")
    for path in written:
        print(f"  {path}")
    return written


def _ir_comparison(dataset, settings, out_root: Path) -> Path:
    """Every retrieval mode on every judged question (ranx; per-query runs checkpointed)."""
    from rag_lab.cli.render import render_ir_table
    from rag_lab.evaluate.retrieval.ir import evaluate_modes, write_ir_run
    from rag_lab.retrieve import INDEX_MODES

    report = evaluate_modes(dataset, settings, list(INDEX_MODES))
    print(render_ir_table(report.results, title=f"{dataset.name}: mode comparison (ranx) — {report.describe()}"))
    return write_ir_run(report, dataset, settings, out_root / f"demo-{dataset.name}-ir")


def _mode_comparison(dataset, settings, out_root: Path, limit: int) -> Path | None:
    """Every mode on a few questions with answers, through the evaluation runner when it exists."""
    try:
        from rag_lab.evaluate.run.runner import ResumeMismatchError, run_evaluation
    except ImportError:
        return None
    if not dataset.has_qa or limit < 1:
        return None
    out = out_root / f"demo-{dataset.name}-modes"
    local = settings.llm_is_local
    params = {"top_n": 3} if local else {}
    from rag_lab.retrieve import INDEX_MODES

    modes = list(INDEX_MODES)
    try:  # a rerun of the demo finishes (or reuses) its earlier run
        run_evaluation(dataset, settings, modes, out, limit=limit, resume=True, rerank=not local, **params)
    except ResumeMismatchError as changed:  # the code or settings changed since: start over, the old run kept aside
        print(f"{changed.args[0]}: moving it aside and starting over")
        run_evaluation(dataset, settings, modes, out, limit=limit, force=True, rerank=not local, **params)
    return out
