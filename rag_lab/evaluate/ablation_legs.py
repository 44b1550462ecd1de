"""Each question's leg candidate lists, retrieved once at the grid's largest prefetch and cached.

``runs/<name>/legs.jsonl`` holds one line per question (appended and flushed as soon as it is
retrieved, so an interrupted ablation resumes where it stopped); ``legs.meta.json`` says which
index, depth and legs the lines belong to (a different index or a shallower cache is moved aside
and recomputed, never mixed in).

Legs: ``dense`` (Qdrant dense vectors), ``bm25`` (bm25s; the ``fusion`` mode's sparse leg) and
``sparse`` (Qdrant's sparse vectors with IDF; ``hybrid``'s sparse leg). ``hybrid``'s two lists come
from the hybrid retriever itself; ``fusion`` reuses the same dense list (the same Qdrant search)
and adds bm25.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_lab.evaluate.ablation_grid import MODE_LEGS, Candidates
from rag_lab.progress import progress_bar
from rag_lab.retrieve.records import doc_key

LEGS_FILE = "legs.jsonl"
LEGS_META = "legs.meta.json"
# Questions embedded per forward pass; also how much a crash can lose (the lines are written per question).
EMBED_BATCH = 64
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

    def __init__(self, index, legs: Sequence[str], depth: int) -> None:
        from rag_lab.retrieve.hybrid import HybridRetriever

        self.index = index
        self.legs = list(legs)
        self.depth = depth
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
        """Node id → document key; unknown ids from one payload fetch. Node metadata is stored flat
        in the payload, so the key is read there; parsing ``_node_content`` is the fallback."""
        from llama_index.core.vector_stores.utils import metadata_dict_to_node

        missing = [i for i in node_ids if i not in self._keys]
        if missing:
            for node_id, payload in self.index.vectors.payloads(missing).items():
                self._keys[node_id] = doc_key(payload) if ("filename" in payload or "doc_id" in payload) \
                    else doc_key(metadata_dict_to_node(payload).metadata)
        return self._keys

    def _bm25_leg(self, query: str) -> Leg:
        """The ``bm25`` mode's ranking (same tokenizer, same zero-score cut), as ids and scores."""
        import numpy as np

        engine = self.bm25.bm25
        tokens = [t for t in self.index.tokenizer(query) if t in engine.vocab_dict]
        if not tokens:
            return []
        ids, scores = engine.retrieve([tokens], k=min(self.depth, len(self._corpus_hits)),
                                      show_progress=False, return_as="tuple")
        # bm25s returns the corpus entries themselves when it holds the corpus, else positions
        return [((str(i["node_id"]), doc_key(i)) if isinstance(i, dict) else self._corpus_hits[int(i)]) + (float(score),)
                for i, score in zip(np.asarray(ids[0]).tolist(), np.asarray(scores[0]).tolist()) if score > 0]

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
        if self.bm25 is not None:
            started = time.perf_counter()
            legs["bm25"] = self._bm25_leg(query)
            ms["bm25"] = (time.perf_counter() - started) * 1000.0
        return {leg: legs[leg] for leg in self.legs}, ms


@dataclass
class LegCache:
    run_dir: Path
    fingerprint: str
    depth: int
    legs: list[str]

    @property
    def path(self) -> Path:
        return self.run_dir / LEGS_FILE

    @property
    def meta_path(self) -> Path:
        return self.run_dir / LEGS_META

    def _compatible(self) -> bool:
        if not self.meta_path.exists():
            return False
        try:
            meta = json.loads(self.meta_path.read_text())
        except json.JSONDecodeError:
            return False
        return (meta.get("fingerprint") == self.fingerprint and int(meta.get("depth", 0)) >= self.depth
                and set(self.legs) <= set(meta.get("legs", [])))

    def load(self) -> dict[str, dict]:
        """Cached lines by question id; an incompatible cache is moved aside (``legs.jsonl.old``)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not self._compatible():
            if self.path.exists():
                self.path.replace(self.path.with_suffix(".jsonl.old"))
            self.meta_path.write_text(json.dumps(
                {"fingerprint": self.fingerprint, "depth": self.depth, "legs": self.legs}, indent=2))
            return {}
        done: dict[str, dict] = {}
        if self.path.exists():
            text = self.path.read_text(encoding="utf-8")
            if text and not text.endswith("\n"):  # a line cut by a crash: drop it, that question is redone
                text = text[: text.rfind("\n") + 1]
                self.path.write_text(text, encoding="utf-8")
            for line in text.splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                done[str(record["qid"])] = record
        return done

    def append(self, handle, record: dict) -> None:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.flush()


def retrieve_legs(
    index, queries: dict[str, str], run_dir: Path, modes: Sequence[str], depth: int,
    progress: bool = True, retriever_factory: Callable[..., LegRetriever] = LegRetriever,
) -> tuple[list[Candidates], dict[str, dict[str, float]]]:
    """Every question's leg lists (cached in ``run_dir``) and the retrieval milliseconds per leg."""
    legs = legs_needed(modes)
    cache = LegCache(Path(run_dir), index.manifest.fingerprint, depth, legs)
    done = cache.load()
    todo = [q for q in queries if q not in done]
    if todo:
        retriever = retriever_factory(index, legs, depth)
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
                    record = {"qid": qid, "legs": found, "ms": ms}
                    cache.append(handle, record)
                    done[qid] = record
                    bar.update(1)
    questions, timings = [], {}
    for qid in queries:
        record = done[qid]
        questions.append(Candidates(qid, {
            leg: [(str(c), str(d), float(s)) for c, d, s in record["legs"][leg]][:depth] for leg in legs}))
        timings[qid] = record.get("ms", {})
    return questions, timings
