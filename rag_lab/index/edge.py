"""The embedded default: one Qdrant Edge shard (``qdrant-edge-py``) per build.

Shards are created without a write-ahead log: a shard is written once by its build, flushed, and
only read afterwards. Without a WAL, ``EdgeShard.load`` takes no lock, so any number of
processes (CLI commands, notebook kernels) can query the same shard while another build writes
a *new* shard next to it; the manifest switch is the commit point.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Sequence

from rag_lab.index.backend import Hit, PointData, SparseQuery
from rag_lab.index.manifest import DENSE_VECTOR, SPARSE_VECTOR

# HNSW is built for segments above this size (KB); below it a segment is scanned exactly.
INDEXING_THRESHOLD_KB = 10_000


def _edge():
    import qdrant_edge

    return qdrant_edge


def edge_config(dim: int | None = None, hnsw_m: int | None = None, ef_construct: int | None = None,
                indexing_threshold_kb: int | None = None):
    q = _edge()
    hnsw = None
    if hnsw_m is not None or ef_construct is not None:
        hnsw = q.HnswIndexConfig(m=hnsw_m or 16, ef_construct=ef_construct or 100, full_scan_threshold=10_000)
    optimizers = q.EdgeOptimizersConfig(indexing_threshold=indexing_threshold_kb or INDEXING_THRESHOLD_KB)
    vectors = {DENSE_VECTOR: q.EdgeVectorParams(size=dim, distance=q.Distance.Cosine)} if dim else None
    return q.EdgeConfig(
        vectors=vectors,
        sparse_vectors={SPARSE_VECTOR: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)} if dim else None,
        hnsw_config=hnsw, optimizers=optimizers, wal_enabled=False,
    )


def _hits(points, with_payload: bool) -> list[Hit]:
    return [Hit(str(p.id), float(p.score), p.payload if with_payload else None) for p in points]


def _sparse(query: SparseQuery):
    return _edge().SparseVector(indices=list(query.indices), values=list(query.values))


class EdgeBackend:
    name = "edge"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._shard = _edge().EdgeShard.load(str(self.path))

    @property
    def shard(self):
        """The open shard; reopened after ``close()`` (a CLI command in the same process closes all)."""
        if self._shard is None:
            if not (self.path / "segments").is_dir():
                from rag_lab.errors import IndexNotReadyError

                raise IndexNotReadyError(f"The index generation {self.path} was removed by a newer build",
                                         "open the index again (CorpusIndex.open) to read the current build")
            self._shard = _edge().EdgeShard.load(str(self.path))
        return self._shard

    def _nearest(self, vector, using: str, limit: int, score_threshold=None, with_payload=True):
        q = _edge()
        return q.QueryRequest(limit=limit, query=q.Query.Nearest(vector, using=using),
                              score_threshold=score_threshold, with_payload=with_payload)

    def dense(self, vector: Sequence[float], limit: int, score_threshold: float | None = None,
              with_payload: bool = True) -> list[Hit]:
        request = self._nearest(list(vector), DENSE_VECTOR, limit, score_threshold, with_payload)
        return _hits(self.shard.query(request), with_payload)

    def sparse(self, query: SparseQuery, limit: int, with_payload: bool = True) -> list[Hit]:
        if not query.indices:
            return []
        return _hits(self.shard.query(self._nearest(_sparse(query), SPARSE_VECTOR, limit, None, with_payload)),
                     with_payload)

    def legs(self, vector, query, limit, score_threshold=None) -> tuple[list[Hit], list[Hit]]:
        q = _edge()
        requests = [self._nearest(list(vector), DENSE_VECTOR, limit, score_threshold, False)]
        if query is not None and query.indices:
            requests.append(self._nearest(_sparse(query), SPARSE_VECTOR, limit, None, False))
        answers = self.shard.query_batch(q.QueryBatchRequest(requests))
        dense = _hits(answers[0], False)
        return dense, (_hits(answers[1], False) if len(answers) > 1 else [])

    def rrf(self, vector, query, prefetch, k, weights, limit, score_threshold=None) -> list[Hit]:
        q = _edge()
        stages = [q.Prefetch(limit=prefetch, query=q.Query.Nearest(list(vector), using=DENSE_VECTOR),
                             score_threshold=score_threshold)]
        used = [float(weights[0])]
        if query is not None and query.indices:
            stages.append(q.Prefetch(limit=prefetch, query=q.Query.Nearest(_sparse(query), using=SPARSE_VECTOR)))
            used.append(float(weights[1]))
        request = q.QueryRequest(limit=limit, prefetches=stages, query=q.Fusion.Rrf(k=int(k), weights=used),
                                 with_payload=True)
        return _hits(self.shard.query(request), True)

    def payloads(self, ids: Sequence[str]) -> dict[str, dict]:
        if not ids:
            return {}
        return {str(r.id): r.payload for r in self.shard.retrieve(list(ids), True, False)}

    def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        return {str(r.id): r.vector[DENSE_VECTOR] for r in self.shard.retrieve(list(ids), False, True)}

    def count(self) -> int:
        return int(self.shard.count(_edge().CountRequest(exact=True)))

    def close(self) -> None:
        if self._shard is not None:
            self._shard.close()
            self._shard = None


class EdgeWriter:
    """Creates a fresh shard at ``path`` and fills it; ``finish`` builds indexes and flushes."""

    def __init__(self, path: Path, dim: int, **config) -> None:
        self.path = Path(path)
        if self.path.exists():
            shutil.rmtree(self.path)
        self._shard = _edge().EdgeShard.create(str(self.path), edge_config(dim, **config))

    def upsert(self, points: Sequence[PointData]) -> None:
        q = _edge()
        self._shard.update(q.UpdateOperation.upsert_points([
            q.Point(p.id, {DENSE_VECTOR: list(p.dense), SPARSE_VECTOR: _sparse(p.sparse)}, p.payload) for p in points
        ]))

    def finish(self) -> None:
        self._shard.optimize()  # HNSW for large segments; blocks until done
        self._shard.flush()
        self._shard.close()

    def abort(self) -> None:
        try:
            self._shard.close()
        finally:
            shutil.rmtree(self.path, ignore_errors=True)


# Edge shards are opened once per process and shared (an embedded store allows one opener).
_shared: dict[str, EdgeBackend] = {}
_shared_lock = threading.Lock()


def shared_backend(path: Path) -> EdgeBackend:
    """The process's one open :class:`EdgeBackend` of the shard folder ``path``."""
    key = str(Path(path).resolve())
    with _shared_lock:
        backend = _shared.get(key)
        if backend is None:
            backend = _shared[key] = EdgeBackend(path)
        return backend


def close_shared(path: Path | None = None) -> None:
    """Close one shared edge shard (``path``) or all of them."""
    with _shared_lock:
        keys = [str(Path(path).resolve())] if path is not None else list(_shared)
        for key in keys:
            backend = _shared.pop(key, None)
            if backend is not None:
                backend.close()
