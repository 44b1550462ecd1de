"""Retrieval ablations without re-querying: ``rag-lab ablate`` as a library call.

Flow: open the index → retrieve each question's legs once at the largest prefetch (cached in the
run folder, resumable) → every configuration of the grid from those lists (vectorised RRF) →
ranx metrics in one evaluate + RAGAS ID-based context metrics → bootstrap CIs and paired tests
against a baseline → one live hybrid (or fusion) query compared with its grid configuration (the
spot check) → tidy frames written into the run folder.

Run folder (``runs/<name>``): ``manifest.json``, ``results.csv`` (one row per configuration ×
metric, with CIs and significance), ``per_query.csv.gz`` (config × question × metric) and the leg
cache ``legs.jsonl``.
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.ablation_grid import Config, GridResult, GridSpec, compute_grid
from rag_lab.evaluate.ablation_legs import retrieve_legs
from rag_lab.evaluate.ablation_metrics import grid_per_query
from rag_lab.evaluate.stats import bootstrap_ci, bootstrap_matrix, compare_to_baseline

RESULTS_FILE = "results.csv"
PER_QUERY_FILE = "per_query.csv.gz"
MANIFEST_FILE = "manifest.json"
DETAILS_FILE = "details.json"
ANSWERS_CSV = "answers.csv"
CONFIG_COLUMNS = ["config", "mode", "k", "prefetch", "dense_weight", "sparse_weight", "top_k"]


@dataclass
class AblationResult:
    run_dir: Path
    manifest: dict
    results: "pandas.DataFrame"  # noqa: F821 - one row per configuration × metric
    per_query: "pandas.DataFrame"  # noqa: F821 - config, qid, metric, score
    grid: GridResult | None = field(default=None, repr=False)
    details: dict = field(default_factory=dict, repr=False)  # config → qid → question, relevant, retrieved …
    answers: "pandas.DataFrame | None" = None  # noqa: F821 - answer-level rows, when evaluated


def _baseline_for(config: Config, spec: GridSpec) -> str:
    """The baseline a configuration is compared with: the first mode at the default k and prefetch,
    equal weights (or the first weight pair), at the same top-k (metrics at different cut-offs are
    not comparable)."""
    weights = (1.0, 1.0) if (1.0, 1.0) in spec.weights else spec.weights[0]
    return Config(spec.modes[0], spec.baseline_k, spec.baseline_prefetch, *weights, config.top_k).id


def summarise(per_query: dict, configs: list[Config], spec: GridSpec, n_permutations: int = 1000,
              seed: int = 42) -> "pandas.DataFrame":  # noqa: F821
    """Tidy table: one row per configuration × metric with mean, bootstrap 95 % CI and paired tests
    (Student's t and Fisher's randomization, Holm-corrected) against the configuration's baseline."""
    import pandas as pd

    by_id = {c.id: c for c in configs}
    rows = []
    metrics = sorted({m for per_metric in per_query.values() for m in per_metric})
    for metric in metrics:
        ids = [c.id for c in configs if per_query[c.id].get(metric)]
        if not ids:
            continue
        queries = sorted(per_query[ids[0]][metric])
        matrix = np.array([[per_query[i][metric].get(q, np.nan) for q in queries] for i in ids])
        complete = ~np.isnan(matrix).any(axis=1)
        mean, low, high = (np.full(len(ids), np.nan) for _ in range(3))
        if complete.any():
            mean[complete], low[complete], high[complete] = bootstrap_matrix(matrix[complete], seed=seed)
        for row_i in np.flatnonzero(~complete):
            ci = bootstrap_ci(matrix[row_i], seed=seed)
            mean[row_i], low[row_i], high[row_i] = ci["mean"], ci["ci_low"], ci["ci_high"]
        for i, config_id in enumerate(ids):
            values = matrix[i]
            rows.append({**by_id[config_id].to_dict(), "metric": metric, "mean": mean[i], "ci_low": low[i],
                         "ci_high": high[i], "n": int((~np.isnan(values)).sum()),
                         "n_nan": int(np.isnan(values).sum()), "baseline": _baseline_for(by_id[config_id], spec)})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    significance = []
    for baseline, group in table.groupby("baseline", sort=False):
        systems = {c: per_query[c] for c in group["config"].unique()}
        if baseline not in systems:
            continue
        significance.append(compare_to_baseline(systems, baseline, n_permutations=n_permutations, seed=seed))
    sig = pd.concat(significance, ignore_index=True) if significance else pd.DataFrame()
    if sig.empty:
        for col in ("delta", "p_student", "p_fisher", "p_student_holm", "p_fisher_holm", "significant"):
            table[col] = np.nan if col != "significant" else False
        return table
    # Holm over the whole grid (one family per test), not per baseline group.
    from rag_lab.evaluate.stats import holm

    for test in sig["test"].unique():
        mask = sig["test"] == test
        sig.loc[mask, "p_holm"] = holm(sig.loc[mask, "p_value"].tolist())
    wide = sig.pivot_table(index=["system", "metric"], columns="test", values=["p_value", "p_holm", "delta"],
                           aggfunc="first")
    wide.columns = [f"{a}_{b}" for a, b in wide.columns]
    wide = wide.reset_index().rename(columns={"system": "config"})
    wide["delta"] = wide.get("delta_fisher", wide.get("delta_student"))
    wide = wide.rename(columns={"p_value_student": "p_student", "p_value_fisher": "p_fisher",
                                "p_holm_student": "p_student_holm", "p_holm_fisher": "p_fisher_holm"})
    keep = ["config", "metric", "delta", "p_student", "p_fisher", "p_student_holm", "p_fisher_holm"]
    table = table.merge(wide[[c for c in keep if c in wide.columns]], on=["config", "metric"], how="left")
    alpha = 0.05
    # Significant = both tests agree after Holm correction (the baseline itself is never significant).
    table["significant"] = (table["p_student_holm"] < alpha) & (table["p_fisher_holm"] < alpha)
    return table


def per_query_frame(per_query: dict, configs: list[Config]) -> "pandas.DataFrame":  # noqa: F821
    import pandas as pd

    rows = [(c.id, qid, metric, score) for c in configs for metric, scores in per_query[c.id].items()
            for qid, score in scores.items()]
    return pd.DataFrame(rows, columns=["config", "qid", "metric", "score"])


def spot_check(index, questions, queries: dict[str, str], grid: GridResult, spec: GridSpec) -> dict:
    """One live query through the real retriever (hybrid: Qdrant's own RRF) vs the grid's ranking
    of the same configuration, recorded in the manifest."""
    from rag_lab.retrieve.fusion import FusionRetriever
    from rag_lab.retrieve.hybrid import HybridRetriever

    mode = "hybrid" if "hybrid" in spec.modes else spec.modes[0]
    qid = questions[0].qid
    weights = spec.weights[0]
    config = Config(mode, spec.baseline_k, spec.depth, *weights, max(spec.top_k))
    cls = HybridRetriever if mode == "hybrid" else FusionRetriever
    retriever = cls(index, top_k=config.top_k, prefetch=config.prefetch, rrf_k=config.k,
                    dense_weight=weights[0], sparse_weight=weights[1])
    live = [r.node.node_id for r in retriever.retrieve(queries[qid])]
    computed = list(grid.chunks[config.id][qid])
    return {"mode": mode, "config": config.id, "qid": qid, "query": queries[qid], "live": live,
            "grid": computed, "equal": live == computed,
            "what": "Qdrant's own RRF (query_points with prefetch + RrfQuery)" if mode == "hybrid"
            else "the fusion retriever"}


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                              cwd=Path(__file__).resolve().parent).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("rag-lab", "llama-index-core", "qdrant-client", "bm25s", "ranx", "ragas", "numpy", "pandas"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def _timing_summary(timings: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    legs: dict[str, list[float]] = {}
    for per_leg in timings.values():
        for leg, ms in per_leg.items():
            legs.setdefault(leg, []).append(ms)
    return {leg: {"p50_ms": statistics.median(v), "p95_ms": float(np.percentile(v, 95)), "n": len(v)}
            for leg, v in legs.items()}


def load_questions(dataset: Dataset, limit: int | None = None):
    """Queries, qrels and (for Q&A datasets) each question's reference source files."""
    queries, qrels = dataset.judged_queries(limit)
    references = None
    if dataset.kind == "folder" and dataset.has_qa:
        references = {q: sorted(qrels[q]) for q in queries}
    return queries, qrels, references


def run_ablation(dataset: Dataset, settings: Settings, spec: GridSpec, out_dir: Path | str,
                 limit: int | None = None, progress: bool = True, n_permutations: int = 1000,
                 seed: int = 42, answer_configs: list[Config] | None = None, answer_limit: int = 5,
                 llm=None, contextual: str = "none") -> AblationResult:
    """The whole ablation (see the module doc). ``answer_configs``: configurations whose chunks are
    also answered (first ``answer_limit`` questions of a Q&A dataset; one generation per distinct
    context, cached in the run folder). ``contextual``: run the grid on that contextual index
    variant (see ablation_contextual)."""
    from rag_lab.index import CorpusIndex

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    index = CorpusIndex.open(dataset, settings, contextual)
    queries, qrels, references = load_questions(dataset, limit)
    timing: dict[str, float] = {}

    started = time.perf_counter()
    questions, leg_ms = retrieve_legs(index, queries, out_dir, spec.modes, spec.depth, progress=progress)
    timing["legs_s"] = time.perf_counter() - started

    started = time.perf_counter()
    grid = compute_grid(questions, spec)
    timing["grid_s"] = time.perf_counter() - started

    started = time.perf_counter()
    per_query = grid_per_query(grid, qrels, references)
    timing["metrics_s"] = time.perf_counter() - started

    started = time.perf_counter()
    results = summarise(per_query, grid.configs, spec, n_permutations=n_permutations, seed=seed)
    timing["stats_s"] = time.perf_counter() - started

    check = spot_check(index, questions, queries, grid, spec)
    manifest = {
        "kind": "ablation", "dataset": dataset.name, "dataset_root": str(dataset.root),
        "index_fingerprint": index.manifest.fingerprint, "embed_model": index.manifest.embed_model,
        "contextual": contextual,
        "n_queries": len(queries), "n_configs": len(grid.configs), "grid": spec.to_dict(),
        "baseline": f"{spec.modes[0]} k={spec.baseline_k} prefetch={spec.baseline_prefetch} at each top-k",
        "rrf": "1/(k + rank/weight), ranks from 1 (rag_lab.fusion.rrf)",
        "metrics": sorted({m for per_metric in per_query.values() for m in per_metric}),
        "document_key": "filename (BEIR: corpus _id; folders: the file name a Q&A source_file names)",
        "significance": {"tests": ["student", "fisher"], "correction": "holm", "alpha": 0.05,
                         "n_permutations": n_permutations, "seed": seed,
                         "significant": "both tests, Holm-adjusted p < alpha"},
        "ci": {"method": "percentile bootstrap", "confidence": 0.95, "resamples": 2000, "seed": seed},
        "answers": None, "spot_check": check, "leg_latency": _timing_summary(leg_ms), "timing": timing,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "git_commit": _git_commit(),
        "versions": _versions(),
    }
    answers = None
    if answer_configs and dataset.has_qa and answer_limit > 0:
        from rag_lab.evaluate.ablation_answers import answers_frame, generate_answers

        started = time.perf_counter()
        qids = list(queries)[:answer_limit]
        rows = generate_answers(index, settings, grid, answer_configs, queries, out_dir, qids, progress=progress,
                                llm=llm)
        answers = answers_frame(rows, {p.id: p for p in dataset.load_qa()}, qrels)
        answers.to_csv(out_dir / ANSWERS_CSV, index=False)
        timing["answers_s"] = time.perf_counter() - started
        manifest_answers = {"configs": [c.id for c in answer_configs], "questions": len(qids),
                            "distinct_contexts": len({r["context"] for r in rows}), "llm": settings.llm_model_name,
                            "provider": settings.llm_provider}
    else:
        manifest_answers = None
    manifest["answers"] = manifest_answers
    frame = per_query_frame(per_query, grid.configs)
    details = question_details(grid, spec, queries, qrels)
    if answers is not None:
        for _, row in answers.iterrows():
            entry = details.setdefault(row["config"], {}).setdefault(row["qid"], {
                "question": queries[row["qid"]], "relevant": sorted(qrels.get(row["qid"], {})),
                "retrieved": list(dict.fromkeys(row["retrieved"]))})
            entry.update({"answer": row["answer"], "cited": list(row["cited"])})
    (out_dir / DETAILS_FILE).write_text(json.dumps(details, ensure_ascii=False))
    results.to_csv(out_dir / RESULTS_FILE, index=False)
    frame.to_csv(out_dir / PER_QUERY_FILE, index=False)
    (out_dir / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
    return AblationResult(out_dir, manifest, results, frame, grid, details, answers)


def baseline_configs(spec: GridSpec) -> list[Config]:
    """Each mode at the default k and prefetch (equal weights, else the first pair), every top-k."""
    weights = (1.0, 1.0) if (1.0, 1.0) in spec.weights else spec.weights[0]
    return [Config(mode, spec.baseline_k, spec.baseline_prefetch, *weights, top)
            for mode in spec.modes for top in spec.top_k]


def question_details(grid: GridResult, spec: GridSpec, queries: dict[str, str], qrels: dict,
                     configs: list[Config] | None = None) -> dict:
    """What the report shows for a question: its text, relevant and retrieved documents, chunk ids."""
    details: dict = {}
    for config in configs or baseline_configs(spec):
        per_q = details[config.id] = {}
        for qid, chunks in grid.chunks[config.id].items():
            per_q[qid] = {"question": queries[qid], "relevant": sorted(qrels.get(qid, {})),
                          "retrieved": list(grid.docs[config.id][qid]), "chunks": list(chunks)}
    return details


def load_ablation(run_dir: Path | str) -> AblationResult:
    """Read a finished ablation run folder back as frames."""
    import pandas as pd

    from rag_lab.errors import DatasetError

    run_dir = Path(run_dir)
    manifest_path = run_dir / MANIFEST_FILE
    if not manifest_path.exists():
        raise DatasetError(f"{run_dir} holds no finished ablation ({MANIFEST_FILE} is missing)",
                           f"run `rag-lab ablate <dataset> --out {run_dir}` first")
    manifest = json.loads(manifest_path.read_text())
    details_path = run_dir / DETAILS_FILE
    details = json.loads(details_path.read_text()) if details_path.exists() else {}
    answers = None
    if (run_dir / ANSWERS_CSV).exists():
        import ast

        answers = pd.read_csv(run_dir / ANSWERS_CSV, dtype={"qid": str})
        for col in ("cited", "retrieved"):
            answers[col] = answers[col].apply(lambda v: ast.literal_eval(v) if isinstance(v, str) else [])
    return AblationResult(run_dir, manifest, pd.read_csv(run_dir / RESULTS_FILE),
                          pd.read_csv(run_dir / PER_QUERY_FILE, dtype={"qid": str}), None, details, answers)
