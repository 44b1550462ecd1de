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
Leg = list[tuple[str, str, float]]


def legs_needed(modes: Sequence[str]) -> list[str]:
    needed: list[str] = []
    for mode in modes:
        for leg in MODE_LEGS[mode]:
            if leg not in needed:
                needed.append(leg)
    return needed


def _hits(results) -> Leg:
    return [(r.node.node_id, doc_key(r.node.metadata), float(r.score)) for r in results]


class LegRetriever:
    """Retrieves the needed legs of one question through the project's retrievers."""

    def __init__(self, index, legs: Sequence[str], depth: int) -> None:
        from rag_lab.retrieve.bm25 import BM25Retriever
        from rag_lab.retrieve.dense import DenseRetriever
        from rag_lab.retrieve.hybrid import HybridRetriever

        self.legs = list(legs)
        self.depth = depth
        self.hybrid = HybridRetriever(index, top_k=2 * depth, prefetch=depth, explain=True) \
            if "sparse" in self.legs else None
        self.dense = DenseRetriever(index, top_k=depth) if "dense" in self.legs and self.hybrid is None else None
        self.bm25 = BM25Retriever(index, top_k=depth) if "bm25" in self.legs else None

    def _hybrid_legs(self, query: str) -> tuple[Leg, Leg]:
        candidates = getattr(self.hybrid, "candidate_legs", None)
        if candidates is not None:  # the engine's own API: [(node id, score)] per leg, best first
            dense, sparse = candidates(query)
            keys = self._doc_keys({node_id for node_id, _ in dense} | {node_id for node_id, _ in sparse})
            return ([(i, keys[i], float(score)) for i, score in dense],
                    [(i, keys[i], float(score)) for i, score in sparse])
        # Otherwise the explained hybrid search returns every candidate of both legs (top_k = 2 × prefetch)
        # with each leg's rank and score: rebuild the two lists from them.
        results = self.hybrid.retrieve(query)
        dense, sparse = [], []
        for r in results:
            e = r.node.metadata.get("explanation") or {}
            hit = (r.node.node_id, doc_key(r.node.metadata))
            if e.get("dense_rank") is not None:
                dense.append((e["dense_rank"], (*hit, float(e["dense_score"]))))
            if e.get("sparse_rank") is not None:
                sparse.append((e["sparse_rank"], (*hit, float(e["sparse_score"]))))
        return [h for _, h in sorted(dense)], [h for _, h in sorted(sparse)]

    def _doc_keys(self, node_ids: set[str]) -> dict[str, str]:
        """Node id → document key, from one payload fetch. Node metadata is stored flat in the
        payload, so the key is read there; parsing ``_node_content`` (the whole chunk) is the fallback."""
        from llama_index.core.vector_stores.utils import metadata_dict_to_node

        payloads = self.hybrid.index.vectors.payloads(list(node_ids))
        return {node_id: doc_key(payload) if ("filename" in payload or "doc_id" in payload)
                else doc_key(metadata_dict_to_node(payload).metadata) for node_id, payload in payloads.items()}

    def __call__(self, query: str) -> tuple[dict[str, Leg], dict[str, float]]:
        legs: dict[str, Leg] = {}
        ms: dict[str, float] = {}
        if self.hybrid is not None:
            started = time.perf_counter()
            legs["dense"], legs["sparse"] = self._hybrid_legs(query)
            ms["dense+sparse"] = (time.perf_counter() - started) * 1000.0
        if self.dense is not None:
            started = time.perf_counter()
            legs["dense"] = _hits(self.dense.retrieve(query))
            ms["dense"] = (time.perf_counter() - started) * 1000.0
        if self.bm25 is not None:
            started = time.perf_counter()
            legs["bm25"] = _hits(self.bm25.retrieve(query))
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
        with cache.path.open("a", encoding="utf-8") as handle:
            for qid in progress_bar(todo, desc="legs", unit="question", enabled=progress):
                found, ms = retriever(queries[qid])
                record = {"qid": qid, "legs": found, "ms": ms}
                cache.append(handle, record)
                done[qid] = record
    questions, timings = [], {}
    for qid in queries:
        record = done[qid]
        questions.append(Candidates(qid, {
            leg: [(str(c), str(d), float(s)) for c, d, s in record["legs"][leg]][:depth] for leg in legs}))
        timings[qid] = record.get("ms", {})
    return questions, timings
