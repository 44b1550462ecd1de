"""IR evaluation of retrieval modes on a BEIR dataset, scored with ranx.

Chunk results are folded to documents (a document's score is its best chunk's), because BEIR
qrels judge documents. Each mode's run is checkpointed under the data directory: one file per
(index fingerprint, vector backend, mode, parameters, depth, tie rule), one entry per question
keyed by a hash of the question's text (never its id: ids default to ``line-N`` and shift when
a line is inserted), so an interrupted evaluation resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.splits import sample_judged
from rag_lab.evaluate.retrieval.cache_keys import question_key
from rag_lab.evaluate.retrieval import ranx_ids
from rag_lab.evaluate.retrieval.ranx_ids import ranked_documents
from rag_lab.fusion import TIE_RULE
from rag_lab.index import CorpusIndex
from rag_lab.progress import progress_bar
from rag_lab.retrieve import build_retriever
from rag_lab.retrieve.configuration import fused_defaults
from rag_lab.retrieve.records import doc_key

METRICS = ("ndcg@10", "recall@100", "mrr@10")
# Ours beside ranx's: CHUNK_HIT is a hit in the first 5 *chunks* of the fused list (before
# documents are deduplicated; ranx's hit_rate@5 counts the first 5 documents), JUDGED the share of the
# top-10 documents that have a judgement for the question (low = the metrics above undercount).
CHUNK_HIT, JUDGED = "chunk_hit@5", "judged@10"
CHUNK_HIT_K, JUDGED_K = 5, 10
ALL_METRICS = (*METRICS, CHUNK_HIT, JUDGED)
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
    chunk_docs: dict[str, list[str]] = field(default_factory=dict)  # query id → document of each of the first chunks

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies_ms.values()) if self.latencies_ms else float("nan")


@dataclass
class IRReport:
    """Means per mode, per-query scores (keyed by query id), and what they cover: which queries
    (n of N), the retrieval parameters, the models, and when."""

    dataset: str
    results: dict[str, dict[str, float]] = field(default_factory=dict)
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    query_ids: list[str] = field(default_factory=list)
    n_available: int = 0  # judged queries in the dataset (before --limit)
    n_unjudgeable: int = 0  # questions whose source_file names no document (left out of every metric)
    params: dict = field(default_factory=dict)  # effective retrieval parameters (defaults filled in)
    models: dict = field(default_factory=dict)  # embedding model, sparse tokenizer/BM25, index fingerprint
    created: str = ""  # ISO date-time (UTC)
    latencies_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # mode → query id → ms
    split: str = "all"  # which questions: all, the dataset's dev split, or the rest (rag_lab.splits)
    pooled: list[dict] | None = None  # unjudged top-10 documents stating the reference's key facts (rag_lab.evaluate.retrieval.pooling)

    def describe(self) -> str:
        """One line saying what the numbers cover (printed above the table)."""
        p = self.params
        part = "all" if len(self.query_ids) == self.n_available else "a sample spread over the documents"
        which = "" if self.split == "all" else f" of the {self.split} split"
        return (f"{len(self.query_ids)} of {self.n_available} judged queries{which} ({part}); depth {p.get('depth')}, "
                f"fusion k={p.get('fusion_k')} (ranks from 1), prefetch {p.get('prefetch')}, weights dense "
                f"{p.get('dense_weight')} / sparse {p.get('sparse_weight')}"
                + (f", at most {p['max_per_doc']} chunks per document" if p.get("max_per_doc") else "")
                + f"; embeddings {self.models.get('embedding')}; "
                f"BM25 k1={self.models.get('bm25_k1')} b={self.models.get('bm25_b')}; {self.created}"
                + (f"; {self.n_unjudgeable} unjudgeable question(s) left out (source_file names no document)"
                   if self.n_unjudgeable else ""))

    def to_json(self) -> dict:
        return {
            "dataset": self.dataset, "created": self.created,
            "queries": {"evaluated": len(self.query_ids), "available": self.n_available, "ids": self.query_ids,
                        "unjudgeable": self.n_unjudgeable, "split": self.split},
            "params": self.params, "models": self.models, "metrics": list(ALL_METRICS),
            "metric_definitions": {CHUNK_HIT: "1 when a relevant document is among the first 5 chunks of the "
                                              "ranked chunk list (before documents are deduplicated), else 0",
                                   JUDGED: "share of the top-10 documents (fewer when fewer were retrieved) that "
                                           "have a relevance judgement for the question"},
            "results": self.results, "per_query": self.per_query, "latencies_ms": self.latencies_ms,
            **({"pooled": self.pooled} if self.pooled is not None else {}),
        }


def write_ir_run(report: IRReport, dataset: Dataset, settings: Settings, out: Path) -> Path:
    """An IR evaluation as a run folder that ``rag-lab report`` renders (per-mode table with CIs and
    paired tests, latency): ``manifest.json`` (kind "ir": config, models, versions, git commit)
    and ``ir.json`` (means, per-query scores, latencies)."""
    from rag_lab.evaluate.store.manifest import build_manifest
    from rag_lab.evaluate.store.run_folder import write_json_atomic

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "ir.json", report.to_json())
    manifest = build_manifest(dataset=dataset, settings=settings,
                              config={"modes": list(report.results), "params": report.params,
                                      "queries": len(report.query_ids), "available": report.n_available,
                                      "split": report.split,
                                      "unjudgeable": report.n_unjudgeable},
                              models=report.models)
    write_json_atomic(out / "manifest.json", {"kind": "ir", **manifest})
    return out


def fold_to_documents(results) -> dict[str, float]:
    """``NodeWithScore`` list → ``{doc key: best chunk score}`` (keys from :func:`doc_key`)."""
    docs: dict[str, float] = {}
    for result in results:
        doc_id = doc_key(result.node.metadata)
        score = float(result.score)
        if doc_id not in docs or score > docs[doc_id]:
            docs[doc_id] = score
    return docs


CHECKPOINT_VERSION = 3  # bump when an entry's key or content changes: older checkpoints are recomputed
FIRST_CHUNKS = 10  # how many chunks' documents each checkpoint entry keeps (chunk-level metrics)


def first_chunk_docs(results, n: int = FIRST_CHUNKS) -> list[str]:
    """The document key of each of the first ``n`` chunks, in rank order (repeats kept)."""
    return [doc_key(result.node.metadata) for result in list(results)[:n]]


def chunk_hits(chunk_docs: dict[str, list[str]], qrels: dict[str, dict[str, int]],
               k: int = CHUNK_HIT_K) -> dict[str, float]:
    """Per judged query: 1.0 when a relevant document (grade > 0) owns one of the first ``k`` chunks."""
    return {q: float(any(qrels[q].get(d, 0) > 0 for d in docs[:k])) for q, docs in chunk_docs.items() if q in qrels}


def judged_shares(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]],
                  k: int = JUDGED_K) -> dict[str, float]:
    """Per judged query: judged documents (any grade, 0 included) among its top ``k`` over the
    documents shown there (``min(k, retrieved)``); 0.0 when nothing was retrieved."""
    shares = {}
    for q, docs in run.items():
        if q not in qrels:
            continue
        top = ranked_documents(docs)[:k]
        shares[q] = sum(d in qrels[q] for d in top) / len(top) if top else 0.0
    return shares


def _checkpoint_path(settings: Settings, index: CorpusIndex, mode: str, params: dict) -> Path:
    # Everything that shapes the ranking: the index (fingerprint covers corpus, embedding model,
    # tokenizer, chunking, contextual variant), the vector backend (engines may order ties
    # differently), the mode and its effective parameters (defaults filled in: a changed default
    # misses, a default given explicitly hits), the depth and the tie rule.
    key = json.dumps({"v": CHECKPOINT_VERSION, "fp": index.manifest.fingerprint, "backend": index.paths.backend,
                      "mode": mode, "params": {**fused_defaults(), **params}, "depth": DEPTH, "ties": TIE_RULE},
                     sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(settings.data_dir) / "runs" / index.paths.root.name / f"{mode}-{digest}.json"


def _read_checkpoint(path: Path) -> dict:
    try:
        done = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(done, dict) and isinstance(done.get("run"), dict) and isinstance(done.get("latency"), dict):
            return done
    except (OSError, ValueError):
        pass
    return {"run": {}, "latency": {}}  # a damaged checkpoint is a cache miss: the queries run again


def run_mode(
    mode: str, dataset: Dataset, settings: Settings, queries: dict[str, str],
    params: dict | None = None, progress: bool = True, resume: bool = True, contextual: str | None = None,
) -> ModeRun:
    """Run every query through ``mode`` (depth 100), with a per-query checkpoint file.
    ``contextual`` runs it on that contextual index variant (its fingerprint keys the checkpoint)."""
    params = {k: v for k, v in (params or {}).items() if v is not None}
    index = CorpusIndex.open(dataset, settings, contextual)
    path = _checkpoint_path(settings, index, mode, params)
    done: dict = _read_checkpoint(path) if resume and path.exists() else {"run": {}, "latency": {}}
    done.setdefault("chunks", {})
    keys = {qid: question_key(text) for qid, text in queries.items()}
    todo = list(dict.fromkeys(keys[q] for q in queries if keys[q] not in done["run"] or keys[q] not in done["chunks"]))
    texts = {keys[q]: queries[q] for q in queries}
    if todo:
        retriever = build_retriever(mode, settings, dataset, contextual=contextual, top_k=DEPTH, **params)
        path.parent.mkdir(parents=True, exist_ok=True)
        for n, key in enumerate(progress_bar(todo, desc=f"{mode}", unit="query", enabled=progress), start=1):
            started = time.perf_counter()
            results = retriever.retrieve(texts[key])
            done["latency"][key] = (time.perf_counter() - started) * 1000.0
            done["run"][key] = fold_to_documents(results)
            done["chunks"][key] = first_chunk_docs(results)
            if n % 50 == 0 or n == len(todo):  # checkpoint: a crash loses at most 50 queries
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(done))
                tmp.replace(path)
    return ModeRun(mode, params, {q: done["run"][keys[q]] for q in queries},
                   {q: done["latency"][keys[q]] for q in queries}, {q: done["chunks"][keys[q]] for q in queries})


def score_run(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]],
              metrics=METRICS) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """ranx metrics (mean and per query; :func:`ranx_ids.score_run`). Queries with no results count as zeros."""
    return ranx_ids.score_run(run, qrels, metrics)


def evaluate_modes(
    dataset: Dataset, settings: Settings, modes: list[str], params: dict | None = None,
    progress: bool = True, resume: bool = True, limit: int | None = None, contextual: str | None = None,
    split: str = "all", pool: bool = False,
) -> IRReport:
    """Every mode's ranx metrics plus ``chunk_hit@5`` and ``judged@10`` over the judged queries of
    ``split`` (all, dev or rest: :func:`rag_lab.splits.select_split`), or ``limit`` of them. ``pool``:
    also list the unjudged top-10 documents that state each reference's key facts (for review)."""
    if pool and not (dataset.kind == "folder" and dataset.has_qa):
        from rag_lab.errors import DatasetError

        raise DatasetError(f"--pool needs reference answers, and {dataset.name!r} has no qa.jsonl",
                           "use it on a folder dataset with qa.jsonl (question, reference_answer, source_file)")
    queries, qrels = dataset.judged_queries(split=split)
    n_available = len(queries)
    queries, qrels = sample_judged(queries, qrels, limit)
    index = CorpusIndex.open(dataset, settings, contextual)
    manifest = index.manifest
    report = IRReport(
        dataset.name, query_ids=list(queries), n_available=n_available,
        n_unjudgeable=len(dataset.unjudgeable_questions()),
        params={"depth": DEPTH, **fused_defaults(), **{k: v for k, v in (params or {}).items() if v is not None}},
        models={"embedding": manifest.embed_model, "sparse_tokenizer": manifest.tokenizer,
                "bm25_k1": manifest.bm25_k1, "bm25_b": manifest.bm25_b, "index_fingerprint": manifest.fingerprint,
                "index_built_at": manifest.built_at, "contextual": manifest.contextual},
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"), split=split,
    )
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for mode in modes:
        mode_run = run_mode(mode, dataset, settings, queries, params, progress, resume, contextual)
        means, per_query = score_run(mode_run.run, qrels)
        per_query[CHUNK_HIT] = chunk_hits(mode_run.chunk_docs, qrels)
        per_query[JUDGED] = judged_shares(mode_run.run, qrels)
        for metric in (CHUNK_HIT, JUDGED):
            means[metric] = statistics.fmean(per_query[metric].values()) if per_query[metric] else float("nan")
        report.results[mode] = {**means, "p50_ms": mode_run.p50_ms}
        report.per_query[mode] = per_query
        report.latencies_ms[mode] = mode_run.latencies_ms
        runs[mode] = mode_run.run
    if pool:
        from rag_lab.evaluate.retrieval.pooling import document_texts, pool_unjudged

        references = {p.id: (p.question, p.reference_answer or "") for p in dataset.load_qa()}
        texts = document_texts(index)
        report.pooled = pool_unjudged(runs, qrels, references, texts)
    return report
