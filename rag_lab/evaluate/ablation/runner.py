"""Retrieval ablations without re-querying: ``rag-lab ablate`` as a library call.

Flow: open the index → retrieve each question's legs once at the largest prefetch (cached in the
run folder, resumable) → every configuration of the grid from those lists (vectorised RRF) →
ranx metrics at each configuration's top-k + RAGAS ID-based context metrics → bootstrap CIs and
paired tests, FWER ≤ 0.05 over every row that can be marked (:mod:`.significance`) → live queries compared
with their grid configurations at every prefetch (:mod:`.spot_check`) → tidy frames written into
the run folder.

Run folder (``runs/<name>``): ``manifest.json``, ``results.csv`` (one row per configuration ×
metric, with CIs and significance), ``per_query.csv.gz`` (config × question × metric) and the leg
cache ``legs.jsonl``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.ablation.grid import Config, GridResult, GridSpec, compute_grid
from rag_lab.evaluate.ablation.legs import retrieve_legs
from rag_lab.evaluate.ablation.metrics import grid_per_query
from rag_lab.evaluate.ablation.provenance import now, timing_summary, versions
from rag_lab.evaluate.ablation.significance import significance_manifest, summarise
from rag_lab.evaluate.ablation.spot_check import spot_check
from rag_lab.evaluate.store.manifest import git_commit
from rag_lab.splits import spread_by_source

RESULTS_FILE = "results.csv"
PER_QUERY_FILE = "per_query.csv.gz"
MANIFEST_FILE = "manifest.json"
DETAILS_FILE = "details.json"
ANSWERS_CSV = "answers.csv"


@dataclass
class AblationResult:
    run_dir: Path
    manifest: dict
    results: "pandas.DataFrame"  # noqa: F821 - one row per configuration × metric
    per_query: "pandas.DataFrame"  # noqa: F821 - config, qid, metric, score
    grid: GridResult | None = field(default=None, repr=False)
    details: dict = field(default_factory=dict, repr=False)  # config → qid → question, relevant, retrieved …
    answers: "pandas.DataFrame | None" = None  # noqa: F821 - answer-level rows, when evaluated


def per_query_frame(per_query: dict, configs: list[Config]) -> "pandas.DataFrame":  # noqa: F821
    import pandas as pd

    rows = [(c.id, qid, metric, score) for c in configs for metric, scores in per_query[c.id].items()
            for qid, score in scores.items()]
    return pd.DataFrame(rows, columns=["config", "qid", "metric", "score"])


def load_questions(dataset: Dataset, limit: int | None = None, split: str = "all"):
    """Queries, qrels and (for Q&A datasets) each question's reference source files; ``split``:
    all, the declared dev split or the rest (:func:`rag_lab.splits.select_split`)."""
    queries, qrels = dataset.judged_queries(limit, split=split)
    references = None
    if dataset.kind == "folder" and dataset.has_qa:
        references = {q: sorted(qrels[q]) for q in queries}
    return queries, qrels, references


def run_ablation(dataset: Dataset, settings: Settings, spec: GridSpec, out_dir: Path | str,
                 limit: int | None = None, progress: bool = True,
                 seed: int = 42, answer_configs: list[Config] | None = None, answer_limit: int = 5,
                 llm=None, contextual: str = "none", split: str = "all",
                 concurrency: int | None = None, force: bool = False) -> AblationResult:
    """The whole ablation (see the module doc). ``answer_configs``: configurations whose chunks are
    also answered (``answer_limit`` questions of a Q&A dataset spread over its source documents,
    as ``--limit`` spreads them; one generation per distinct context, cached in the run folder).
    ``contextual``: run the grid on that contextual index variant (see :mod:`.contextual`).
    ``split``: the questions of the declared dev split, the rest, or all. ``concurrency``: answers in
    flight at once (``eval``'s rule: 1 for the in-process local model, which refuses more; 8 remote).
    ``out_dir`` holding another run (another dataset, grid, questions, variant or seed) is refused,
    naming both; ``force`` moves that run aside first (:mod:`rag_lab.evaluate.store.claim`); a rerun
    of the same ablation reuses the folder's leg cache."""
    from rag_lab.models.concurrency import resolve_concurrency
    from rag_lab.evaluate.store.run_lock import run_lock

    if answer_configs:  # before any work: a refused --concurrency says so at once
        concurrency = resolve_concurrency(concurrency, settings, None, llm)

    with run_lock(out_dir):  # one writer per run folder (a second `ablate --out` there is refused)
        return _run_ablation(dataset, settings, spec, Path(out_dir), limit=limit, progress=progress, seed=seed,
                             answer_configs=answer_configs, answer_limit=answer_limit, llm=llm, contextual=contextual,
                             split=split, concurrency=concurrency, force=force)


# What an ablation's results depend on besides its dataset (manifest key → label shown when it differs).
# Answers are not among them: they are added to (or left out of) the same grid, from the folder's answer cache.
ABLATION_LABELS = {"grid": "grid", "n_queries": "questions", "split": "--split", "contextual": "--contextual",
                   "index_fingerprint": "index", "seed": "--seed", "question_set": "--questions"}


def ablation_identity(manifest: dict) -> dict:
    """The values of ABLATION_LABELS a manifest records (the seed is under "ci")."""
    identity = {key: manifest[key] for key in ABLATION_LABELS if key in manifest}
    if isinstance(manifest.get("ci"), dict) and "seed" in manifest["ci"]:
        identity["seed"] = manifest["ci"]["seed"]
    return identity


def claim_ablation_folder(out_dir: Path, dataset: Dataset, spec: GridSpec, identity: dict, *,
                          force: bool) -> Path | None:
    """Refuse (or, with ``force``, move aside) another run in ``out_dir`` before this ablation writes there."""
    from rag_lab.evaluate.store.claim import RunOwner, changed, claim_run_folder, counted

    differences: list[str] = []
    try:
        previous = json.loads((out_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        previous = None  # none, or unreadable (the claim names it an unknown run)
    if isinstance(previous, dict) and previous.get("kind") == "ablation":
        differences = changed(ablation_identity(previous), identity, ABLATION_LABELS)
    owner = RunOwner("ablation", dataset.name, str(dataset.root),
                     f"{counted(len(spec.configs()), 'configuration')} × {counted(identity['n_queries'], 'question')}")
    return claim_run_folder(out_dir, owner, differences, force=force)


def _run_ablation(dataset: Dataset, settings: Settings, spec: GridSpec, out_dir: Path, *, limit, progress, seed,
                  answer_configs, answer_limit, llm, contextual, split, concurrency, force=False) -> AblationResult:
    from rag_lab.evaluate.plan.study_plan import resolve_study
    from rag_lab.index import CorpusIndex

    index = CorpusIndex.open(dataset, settings, contextual)
    queries, qrels, references = load_questions(dataset, limit, split)
    answering = bool(answer_configs and dataset.has_qa and answer_limit > 0)
    plan = resolve_study(index, settings, answering=answering, llm=llm)  # once: the models below are these
    from rag_lab.evaluate.questions.question_set import question_set

    question_set_entry = question_set(dataset).as_dict()
    claim_ablation_folder(out_dir, dataset, spec, {
        "grid": spec.to_dict(), "n_queries": len(queries), "split": split, "contextual": contextual,
        "index_fingerprint": plan.index_fingerprint, "seed": seed, "question_set": question_set_entry}, force=force)
    timing: dict[str, float] = {}

    started = time.perf_counter()
    questions, leg_ms = retrieve_legs(index, queries, out_dir, spec.modes, spec.depth, progress=progress,
                                      prefetches=spec.prefetch)
    timing["legs_s"] = time.perf_counter() - started

    started = time.perf_counter()
    grid = compute_grid(questions, spec)
    timing["grid_s"] = time.perf_counter() - started

    started = time.perf_counter()
    per_query = grid_per_query(grid, qrels, references)
    timing["metrics_s"] = time.perf_counter() - started

    started = time.perf_counter()
    results = summarise(per_query, grid.configs, spec, seed=seed)
    timing["stats_s"] = time.perf_counter() - started

    check = spot_check(index, questions, queries, grid, spec)
    manifest = {
        "kind": "ablation", "dataset": dataset.name, "dataset_root": str(dataset.root),
        "index_fingerprint": plan.index_fingerprint, "embed_model": plan.embedding, "models": plan.models,
        "contextual": contextual,
        "n_queries": len(queries), "split": split, "question_set": question_set_entry,
        "n_configs": len(grid.configs), "grid": spec.to_dict(),
        "baseline": (f"each mode at {spec.baseline_text()}, at each top-k; "
                     f"other modes' baselines against {spec.modes[0]}'s"),
        "rrf": "1/(k + rank/weight), ranks from 1 (rag_lab.fusion.rrf)",
        "metrics": sorted({m for per_metric in per_query.values() for m in per_metric}),
        "metric_definitions": {"<m>@top_k": "ranx <m>@k with k = the row's top_k, on the documents folded "
                                            "from the top-k chunks (precision@k divides by k; nDCG@k's ideal "
                                            "holds min(k, relevant) documents)",
                               "id_context_*": "RAGAS ID-based context precision/recall of the folded documents"},
        "document_key": "the path relative to the documents folder (BEIR: corpus _id)",
        "significance": significance_manifest(results),
        "ci": {"method": "percentile bootstrap", "confidence": 0.95, "resamples": 2000, "seed": seed},
        "answers": None, "spot_check": check, "leg_latency": timing_summary(leg_ms), "timing": timing,
        "created": now(), "git_commit": git_commit(), "versions": versions(),
    }
    answers = None
    if answering:
        from rag_lab.evaluate.ablation.answers import answers_frame, generate_answers

        started = time.perf_counter()
        qids = answer_questions(queries, qrels, answer_limit)
        rows = generate_answers(index, settings, grid, answer_configs, queries, out_dir, qids, progress=progress,
                                llm=llm, concurrency=concurrency, generator=plan.generator)
        answers = answers_frame(rows, {p.id: p for p in dataset.load_qa()}, qrels)
        answers.to_csv(out_dir / ANSWERS_CSV, index=False)
        timing["answers_s"] = time.perf_counter() - started
        manifest_answers = {"configs": [c.id for c in answer_configs], "questions": len(qids),
                            "distinct_contexts": len({r["context"] for r in rows}), "llm": plan.generator}
    else:
        manifest_answers = None
        # an earlier run's answers would be shown beside these results (the cache answers.jsonl stays)
        (out_dir / ANSWERS_CSV).unlink(missing_ok=True)
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


def answer_questions(queries: dict[str, str], qrels: dict, limit: int) -> list[str]:
    """The questions answered: ``limit`` of them spread over their source documents (the spread
    ``--limit`` uses), never the first lines of qa.jsonl (which list one document's questions)."""
    return spread_by_source(list(queries), {q: sorted(qrels.get(q, {})) for q in queries}, limit)


def baseline_configs(spec: GridSpec) -> list[Config]:
    """Each mode at the default k and prefetch (equal weights, else the first pair), every top-k."""
    return [spec.baseline(mode, top) for mode in spec.modes for top in spec.top_k]


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
    if manifest.get("answers") and (run_dir / ANSWERS_CSV).exists():
        import ast

        answers = pd.read_csv(run_dir / ANSWERS_CSV, dtype={"qid": str})
        for col in ("cited", "retrieved"):
            answers[col] = answers[col].apply(lambda v: ast.literal_eval(v) if isinstance(v, str) else [])
    return AblationResult(run_dir, manifest, pd.read_csv(run_dir / RESULTS_FILE),
                          pd.read_csv(run_dir / PER_QUERY_FILE, dtype={"qid": str}), None, details, answers)
