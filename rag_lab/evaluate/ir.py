"""IR evaluation of retrieval modes on a BEIR dataset, scored with ranx.

Chunk results are folded to documents (a document's score is its best chunk's), because BEIR
qrels judge documents. Each mode's run is checkpointed under the data directory, keyed by the
index fingerprint and the parameters, so an interrupted evaluation resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.index import CorpusIndex
from rag_lab.retrieve import build_retriever

METRICS = ("ndcg@10", "recall@100", "mrr@10")
# Published SciFact (BEIR test) nDCG@10 anchors, shown beside our numbers.
SCIFACT_ANCHORS = {
    "bm25": "BM25 0.665 (BEIR paper) / 0.679 (Pyserini)",
    "dense": "all-MiniLM-L6-v2 0.645",
    "fusion": "MiniLM + BM25 RRF 0.7175 (Qdrant article)",
    "hybrid": "MiniLM + BM25 RRF 0.7175 (Qdrant article)",
}
DEPTH = 100


@dataclass
class ModeRun:
    mode: str
    params: dict
    run: dict[str, dict[str, float]]
    latencies_ms: dict[str, float]

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies_ms.values()) if self.latencies_ms else float("nan")


@dataclass
class IRReport:
    dataset: str
    results: dict[str, dict[str, float]] = field(default_factory=dict)
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def to_json(self) -> dict:
        return self.results


def fold_to_documents(results) -> dict[str, float]:
    """``NodeWithScore`` list → ``{doc_id: best chunk score}``."""
    docs: dict[str, float] = {}
    for result in results:
        doc_id = str(result.node.metadata["doc_id"])
        score = float(result.score)
        if doc_id not in docs or score > docs[doc_id]:
            docs[doc_id] = score
    return docs


def _checkpoint_path(settings: Settings, index: CorpusIndex, mode: str, params: dict) -> Path:
    key = json.dumps({"fp": index.manifest.fingerprint, "mode": mode, "params": params}, sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(settings.data_dir) / "runs" / index.name / f"{mode}-{digest}.json"


def run_mode(
    mode: str, dataset: Dataset, settings: Settings, queries: dict[str, str],
    params: dict | None = None, progress: bool = True, resume: bool = True,
) -> ModeRun:
    """Run every query through ``mode`` (depth 100), with a per-query checkpoint file."""
    params = {k: v for k, v in (params or {}).items() if v is not None}
    index = CorpusIndex.open(dataset, settings)
    path = _checkpoint_path(settings, index, mode, params)
    done: dict = json.loads(path.read_text()) if resume and path.exists() else {"run": {}, "latency": {}}
    todo = [q for q in queries if q not in done["run"]]
    if todo:
        retriever = build_retriever(mode, settings, dataset, top_k=DEPTH, **params)
        path.parent.mkdir(parents=True, exist_ok=True)
        for n, qid in enumerate(tqdm(todo, desc=f"{mode}", unit="query", disable=not progress), start=1):
            started = time.perf_counter()
            results = retriever.retrieve(queries[qid])
            done["latency"][qid] = (time.perf_counter() - started) * 1000.0
            done["run"][qid] = fold_to_documents(results)
            if n % 50 == 0 or n == len(todo):  # checkpoint: a crash loses at most 50 queries
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(done))
                tmp.replace(path)
    return ModeRun(mode, params, {q: done["run"][q] for q in queries}, {q: done["latency"][q] for q in queries})


def score_run(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]],
              metrics=METRICS) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """ranx metrics (mean and per query). Queries with no results count as zeros."""
    from ranx import Qrels, Run, evaluate

    filled = {q: (docs or {"__none__": 0.0}) for q, docs in run.items() if q in qrels}
    ranx_run = Run(filled)
    ranx_qrels = Qrels({q: qrels[q] for q in filled})
    means = evaluate(ranx_qrels, ranx_run, list(metrics), make_comparable=True)
    # ranx keeps its own (sorted) query order: key per-query scores by ranx's ids, never by position.
    per_query = {m: {str(q): float(v) for q, v in ranx_run.scores.get(m, {}).items()} for m in metrics}
    return {m: float(means[m]) for m in metrics}, per_query


def evaluate_modes(
    dataset: Dataset, settings: Settings, modes: list[str], params: dict | None = None,
    progress: bool = True, resume: bool = True, limit: int | None = None,
) -> IRReport:
    queries = dataset.load_queries()
    qrels = dataset.load_qrels()
    queries = {q: t for q, t in queries.items() if q in qrels}
    if limit:
        queries = dict(list(queries.items())[:limit])
    report = IRReport(dataset.name)
    for mode in modes:
        mode_run = run_mode(mode, dataset, settings, queries, params, progress, resume)
        means, per_query = score_run(mode_run.run, qrels)
        report.results[mode] = {**means, "p50_ms": mode_run.p50_ms}
        report.per_query[mode] = per_query
    return report
