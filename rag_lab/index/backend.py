"""The vector engine behind a ``CorpusIndex``: one small protocol, three implementations.

- ``edge`` (default): Qdrant's own engine in-process (``qdrant-edge-py``): HNSW dense search, an
  inverted sparse index with the IDF modifier, prefetch + RRF. One shard folder per build.
- ``local``: qdrant-client's local mode (brute force in Python; one process per folder).
- ``server``: a Qdrant server or cluster (``QDRANT_URL``), same client as ``local``.

Retrievers only see :class:`VectorBackend`, so a mode behaves the same on every engine. Scores
and the RRF convention are Qdrant's (``1/(k_q + rank0)``, see :mod:`rag_lab.fusion.rrf`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence


@dataclass(frozen=True)
class Hit:
    """One scored point. ``id`` is always the node id as a string."""

    id: str
    score: float
    payload: dict | None = None


@dataclass(frozen=True)
class SparseQuery:
    indices: list[int]
    values: list[float]


@dataclass(frozen=True)
class PointData:
    """What a build writes for one chunk: node id, dense vector, sparse vector, node payload."""

    id: str
    dense: list[float]
    sparse: SparseQuery
    payload: dict


class VectorBackend(Protocol):
    """Read side of one built index (one collection / one shard)."""

    name: str

    def dense(self, vector: Sequence[float], limit: int, score_threshold: float | None = None,
              with_payload: bool = True) -> list[Hit]: ...

    def sparse(self, query: SparseQuery, limit: int, with_payload: bool = True) -> list[Hit]: ...

    def legs(self, vector: Sequence[float], query: SparseQuery | None, limit: int,
             score_threshold: float | None = None) -> tuple[list[Hit], list[Hit]]:
        """Both legs' candidates (no payloads) in one batched request."""
        ...

    def rrf(self, vector: Sequence[float], query: SparseQuery | None, prefetch: int, k: int,
            weights: Sequence[float], limit: int, score_threshold: float | None = None) -> list[Hit]:
        """Engine-side RRF of a dense and a sparse prefetch (``k`` in Qdrant's convention)."""
        ...

    def payloads(self, ids: Sequence[str]) -> dict[str, dict]: ...

    def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored dense vectors of these points (hybrid orders tied fused scores by them)."""

    def count(self) -> int: ...

    def close(self) -> None: ...


class VectorWriter(Protocol):
    """Write side used by a build: create, upsert in batches, then ``finish`` (index + flush)."""

    def upsert(self, points: Sequence[PointData]) -> None: ...

    def finish(self) -> None: ...

    def abort(self) -> None: ...
