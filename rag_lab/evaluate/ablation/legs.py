"""Each question's leg candidate lists, retrieved once at the grid's largest prefetch and cached.

``runs/<name>/legs.jsonl`` holds one line per question (appended and flushed as soon as it is
retrieved, so an interrupted ablation resumes where it stopped), keyed by a hash of the question's
text (:func:`rag_lab.evaluate.retrieval.cache_keys.question_key`) — not by its id, which shifts when a line
is inserted into qa.jsonl. ``legs.meta.json`` says which ranking signature (everything else that
shapes a ranking, :func:`ranking_signature`: index build, vector engine, tie rule), depth and legs
the lines belong to: a different index or engine, or a shallower cache, is moved aside and
recomputed, never mixed in.

Legs: ``dense`` (Qdrant dense vectors), ``bm25`` (bm25s; the ``fusion`` mode's sparse leg) and
``sparse`` (Qdrant's sparse vectors with IDF; ``hybrid``'s sparse leg). ``hybrid``'s two lists come
from the hybrid retriever itself; ``fusion`` reuses the same dense list (the same Qdrant search)
and adds bm25. For ``hybrid`` the lines also hold ``dense@p`` and ``sparse@p``: the engine's own
lists at each prefetch value p of the grid, in its order — what Qdrant's prefetch fuses. Qdrant
positions tied leg scores its own way and its top-p is not a prefix of its top-P, so a cut of the
deep list would fuse other ranks than the engine does (:meth:`HybridRetriever.engine_legs`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.evaluate.ablation.checkpoint import append_record, read_records
from rag_lab.evaluate.ablation.grid import MODE_LEGS, Candidates
from rag_lab.evaluate.retrieval.cache_keys import question_key
from rag_lab.progress import progress_bar
from rag_lab.retrieve.bm25 import bm25_ranking
from rag_lab.retrieve.ties import LEG_TIE_RULE as TIE_ORDER
from rag_lab.retrieve.records import doc_key

LEGS_FILE = "legs.jsonl"
LEGS_META = "legs.meta.json"
# What a line's key is made of, stated in legs.meta.json (caches keyed another way are moved aside).
KEYED_BY = "question text"
# Questions embedded per forward pass; also how much a crash can lose (the lines are written per question).
EMBED_BATCH = 64
# Stated in the ranking signature: a cache without the engine's own lists is recomputed.
ENGINE_LISTS = "dense@p and sparse@p: the engine's lists at each prefetch, in its order"
Leg = list[tuple[str, str, float]]


def legs_needed(modes: Sequence[str]) -> list[str]:
    needed: list[str] = []
    for mode in modes:
        for leg in MODE_LEGS[mode]:
            if leg not in needed:
                needed.append(leg)
    return needed


class LegRetriever:
    """Retrieves the needed legs of questions through the index's own engines.

    Questions are embedded in batches (:meth:`embed`) and every chunk's document key is known up
    front, so a question costs only its searches: no per-question forward pass, no node objects
    built for the 100-deep lists (only ids, document keys and scores are kept)."""

    def __init__(self, index, legs: Sequence[str], depth: int, prefetches: Sequence[int] = ()) -> None:
        from rag_lab.retrieve.hybrid import HybridRetriever

        self.index = index
        self.legs = list(legs)
        self.depth = depth
        self.engine_at = {p: HybridRetriever(index, prefetch=p) for p in sorted(set(prefetches))} \
            if "sparse" in self.legs else {}
        self.hybrid = HybridRetriever(index, top_k=depth, prefetch=depth) \
            if "sparse" in self.legs or "dense" in self.legs else None
        self.bm25 = index.bm25 if "bm25" in self.legs else None  # llama-index's BM25Retriever (bm25s inside)
        self._keys: dict[str, str] = {}
        if self.bm25 is not None:  # its corpus holds every chunk's flat metadata: no payload fetch
            self._corpus_hits = [(str(e["node_id"]), doc_key(e)) for e in self.bm25.corpus]
            self._keys = dict(self._corpus_hits)

    def embed(self, queries: list[str]) -> list[list[float]] | None:
        """Every question's query embedding, batched (None when no leg needs one)."""
        if self.hybrid is None:
            return None
        from rag_lab.models.embeddings import embed_queries

        return embed_queries(self.index.embed_model, queries)

    def _doc_keys(self, node_ids: set[str]) -> dict[str, str]:
        """Node id → document key; unknown ids from one payload fetch (:func:`doc_key` reads the
        node's own metadata from the flattened payload)."""
        missing = [i for i in node_ids if i not in self._keys]
        if missing:
            for node_id, payload in self.index.vectors.payloads(missing).items():
                self._keys[node_id] = doc_key(payload)
        return self._keys

    def _bm25_leg(self, query: str) -> Leg:
        """The ``bm25`` mode's ranking (same tokenizer, zero-score cut and tie rule), as ids and scores."""
        engine = self.bm25.bm25
        tokens = [t for t in self.index.tokenizer(query) if t in engine.vocab_dict]
        return [self._corpus_hits[i] + (score,) for i, score in bm25_ranking(engine, tokens, self.depth)]

    def __call__(self, query: str, vector: list[float] | None = None) -> tuple[dict[str, Leg], dict[str, float]]:
        legs: dict[str, Leg] = {}
        ms: dict[str, float] = {}
        if self.hybrid is not None:
            started = time.perf_counter()
            dense, sparse = self.hybrid.candidate_legs(query, vector)
            keys = self._doc_keys({i for i, _ in dense} | {i for i, _ in sparse})
            legs["dense"] = [(i, keys[i], float(score)) for i, score in dense]
            legs["sparse"] = [(i, keys[i], float(score)) for i, score in sparse]
            ms["dense+sparse"] = (time.perf_counter() - started) * 1000.0
        if self.engine_at:
            started = time.perf_counter()
            dense_q, sparse_q = self.hybrid._query_vectors(query, vector)
            for p, retriever in self.engine_at.items():
                for leg, hits in zip(("dense", "sparse"), retriever.engine_legs(dense_q, sparse_q)):
                    keys = self._doc_keys({h.id for h in hits})
                    legs[f"{leg}@{p}"] = [(h.id, keys[h.id], float(h.score)) for h in hits]
            ms["engine lists"] = (time.perf_counter() - started) * 1000.0
        if self.bm25 is not None:
            started = time.perf_counter()
            legs["bm25"] = self._bm25_leg(query)
            ms["bm25"] = (time.perf_counter() - started) * 1000.0
        return {leg: hits for leg, hits in legs.items() if leg.split("@")[0] in self.legs}, ms


def ranking_signature(index) -> dict:
    """Everything besides the question text that shapes a leg's ranking: the index build (its
    fingerprint covers the corpus, chunking, embedding model, tokenizer and contextual variant),
    the vector engine that serves the searches, and the tie rule."""
    manifest = index.manifest
    return {"fingerprint": manifest.fingerprint, "backend": getattr(manifest, "backend", None),
            "embed_model": manifest.embed_model, "contextual": getattr(manifest, "contextual", "none"),
            "ties": TIE_ORDER, "hybrid_lists": ENGINE_LISTS}


@dataclass
class LegCache:
    run_dir: Path
    signature: dict
    depth: int
    legs: list[str]
    prefetches: list[int] = field(default_factory=list)  # the engine's own hybrid lists are kept at these

    @property
    def path(self) -> Path:
        return self.run_dir / LEGS_FILE

    @property
    def meta_path(self) -> Path:
        return self.run_dir / LEGS_META

    def _saved_meta(self) -> dict | None:
        """``legs.meta.json`` when its lines serve this run (same ranking, at least as deep, every
        leg asked for), else None."""
        if not self.meta_path.exists():
            return None
        try:
            meta = json.loads(self.meta_path.read_text())
        except json.JSONDecodeError:
            return None
        compatible = (isinstance(meta, dict) and meta.get("keyed_by") == KEYED_BY
                      and meta.get("ranking") == self.signature and int(meta.get("depth", 0)) >= self.depth
                      and set(self.legs) <= set(meta.get("legs", []))
                      and set(self.prefetches) <= set(meta.get("prefetches", [])))
        return meta if compatible else None

    def load(self) -> dict[str, dict]:
        """Cached lines by question key; an incompatible cache is moved aside (``legs.jsonl.old``).
        A compatible cache may be deeper or hold more legs than asked for: then ``depth`` and
        ``legs`` become the cache's, so questions added to it are retrieved like its other lines
        (every line of one file has the depth and legs its meta file states)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        meta = self._saved_meta()
        if meta is None:
            if self.path.exists():
                self.path.replace(self.path.with_suffix(".jsonl.old"))
            self.meta_path.write_text(json.dumps(
                {"ranking": self.signature, "depth": self.depth, "legs": self.legs, "prefetches": self.prefetches,
                 "keyed_by": KEYED_BY}, indent=2))
            return {}
        self.depth, self.legs = int(meta["depth"]), list(meta["legs"])
        self.prefetches = [int(p) for p in meta.get("prefetches", [])]
        return {str(r["key"]): r for r in read_records(self.path, "candidate lists", ("key", "legs"))}


def retrieve_legs(
    index, queries: dict[str, str], run_dir: Path, modes: Sequence[str], depth: int,
    progress: bool = True, retriever_factory: Callable[..., LegRetriever] = LegRetriever,
    prefetches: Sequence[int] = (),
) -> tuple[list[Candidates], dict[str, dict[str, float]]]:
    """Every question's leg lists (cached in ``run_dir`` by question text) and the retrieval
    milliseconds per leg; with ``hybrid``, also the engine's own lists at each of ``prefetches``."""
    legs = legs_needed(modes)
    signature = ranking_signature(index)
    engine_prefetches = sorted(set(int(p) for p in prefetches)) if "sparse" in legs else []
    cache = LegCache(Path(run_dir), signature, depth, legs, engine_prefetches)
    done = cache.load()
    keys = {qid: question_key(text) for qid, text in queries.items()}  # the signature is the meta file's
    todo = list({keys[q]: q for q in reversed(list(queries)) if keys[q] not in done}.values())[::-1]
    if todo:
        extra = {"prefetches": cache.prefetches} if cache.prefetches else {}
        retriever = retriever_factory(index, cache.legs, cache.depth, **extra)  # the cache's, which may exceed the asked
        with cache.path.open("a", encoding="utf-8") as handle, \
                progress_bar(total=len(todo), desc="legs", unit="question", enabled=progress) as bar:
            for start in range(0, len(todo), EMBED_BATCH):
                batch = todo[start:start + EMBED_BATCH]
                started = time.perf_counter()
                vectors = retriever.embed([queries[q] for q in batch])
                embed_ms = (time.perf_counter() - started) * 1000.0 / len(batch)
                for i, qid in enumerate(batch):
                    found, ms = retriever(queries[qid], None if vectors is None else vectors[i])
                    if vectors is not None:
                        ms["embed"] = embed_ms  # the batch's time, shared out
                    record = {"key": keys[qid], "qid": qid, "query": queries[qid], "legs": found, "ms": ms}
                    append_record(handle, record)
                    done[keys[qid]] = record
                    bar.update(1)
    questions, timings = [], {}
    for qid in queries:
        record = done[keys[qid]]
        wanted = legs + [f"{leg}@{p}" for p in engine_prefetches for leg in ("dense", "sparse")]
        questions.append(Candidates(qid, {
            leg: [(str(c), str(d), float(s)) for c, d, s in record["legs"][leg]][:depth] for leg in wanted}))
        timings[qid] = record.get("ms", {})
    return questions, timings
