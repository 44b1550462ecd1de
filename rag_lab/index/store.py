"""Qdrant: local mode on disk by default, or a server/cluster via QDRANT_URL — one code path."""

from __future__ import annotations

import threading
from pathlib import Path

from qdrant_client import QdrantClient, models

from rag_lab.config import Settings
from rag_lab.errors import IndexNotReadyError
from rag_lab.index.manifest import DENSE_VECTOR, SPARSE_VECTOR

_clients: dict[str, QdrantClient] = {}
_lock = threading.Lock()


def qdrant_target(settings: Settings) -> str:
    """A printable description of where vectors live (never includes the API key)."""
    return settings.qdrant_url or str(Path(settings.data_dir) / "qdrant")


def open_qdrant(settings: Settings) -> QdrantClient:
    """One client per target per process (local mode allows a single client per folder)."""
    key = qdrant_target(settings)
    with _lock:
        client = _clients.get(key)
        if client is not None:
            return client
        if settings.qdrant_url:
            api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
            client = QdrantClient(url=settings.qdrant_url, api_key=api_key, timeout=int(settings.request_timeout))
        else:
            path = Path(settings.data_dir) / "qdrant"
            path.mkdir(parents=True, exist_ok=True)
            try:
                client = QdrantClient(path=str(path))
            except RuntimeError as exc:  # portalocker: another process holds the folder
                raise IndexNotReadyError(
                    f"The local Qdrant store {path} is in use by another process ({exc})",
                    "wait for the other rag-lab command to finish, or set RAG_LAB_DATA_DIR to another folder",
                ) from None
        _clients[key] = client
        return client


def unreachable_server_message(exc: BaseException) -> str | None:
    """One line for an exception (or its cause) that says a Qdrant server could not be reached, else
    None: qdrant-client raises ``ResponseHandlingException`` around the transport error, with a
    traceback through its middleware that tells a user nothing."""
    import httpx
    from qdrant_client.http.exceptions import ResponseHandlingException

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (ResponseHandlingException, httpx.TransportError)):
            servers = [k for k in _clients if "://" in k] or ["QDRANT_URL"]
            reason = str(getattr(current, "source", None) or current) or type(current).__name__
            return (f"cannot reach the Qdrant server at {servers[0]} ({reason}) — check that it is running and "
                    "QDRANT_URL is right, or unset QDRANT_URL to use the embedded store")
        current = current.__cause__ or current.__context__
    return None


def close_all() -> None:
    """Close every qdrant-client client and every shared edge shard of this process."""
    from rag_lab.index.edge import close_shared

    close_shared()
    with _lock:
        for client in _clients.values():
            client.close()
        _clients.clear()


def cluster_layout(settings: Settings) -> dict[str, int]:
    """``create_collection``'s shard_number / replication_factor / write_consistency_factor for a
    server (QDRANT_URL), from RAG_LAB_QDRANT_SHARDS / _REPLICATION_FACTOR / _WRITE_CONSISTENCY;
    what is unset is left to the server (1 shard per node at creation, 1 replica, 1 ack)."""
    if not settings.qdrant_url:
        return {}
    layout = {"shard_number": settings.qdrant_shards, "replication_factor": settings.qdrant_replication_factor,
              "write_consistency_factor": settings.qdrant_write_consistency}
    return {k: v for k, v in layout.items() if v is not None}


def create_collection(client: QdrantClient, name: str, dim: int, layout: dict[str, int] | None = None) -> None:
    """Named dense (cosine) + named sparse (IDF) vectors: dense-only vs hybrid is a query-time choice.
    ``layout``: a server's sharding and replication (:func:`cluster_layout`)."""
    if client.collection_exists(name):
        client.delete_collection(name)
    client.create_collection(
        collection_name=name,
        vectors_config={DENSE_VECTOR: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
        sparse_vectors_config={SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        **(layout or {}),
    )


def _client_sparse(query):
    return models.SparseVector(indices=list(query.indices), values=list(query.values))


class ClientBackend:
    """A collection through qdrant-client: local mode (``local``) or a server (``server``)."""

    def __init__(self, client: QdrantClient, collection: str, name: str) -> None:
        self.client, self.collection, self.name = client, collection, name

    @staticmethod
    def _hits(points, with_payload: bool):
        from rag_lab.index.backend import Hit

        return [Hit(str(p.id), float(p.score), p.payload if with_payload else None) for p in points]

    def dense(self, vector, limit, score_threshold=None, with_payload=True):
        response = self.client.query_points(self.collection, query=list(vector), using=DENSE_VECTOR, limit=limit,
                                            score_threshold=score_threshold, with_payload=with_payload)
        return self._hits(response.points, with_payload)

    def sparse(self, query, limit, with_payload=True):
        if not query.indices:
            return []
        response = self.client.query_points(self.collection, query=_client_sparse(query), using=SPARSE_VECTOR,
                                            limit=limit, with_payload=with_payload)
        return self._hits(response.points, with_payload)

    def legs(self, vector, query, limit, score_threshold=None):
        requests = [models.QueryRequest(query=list(vector), using=DENSE_VECTOR, limit=limit,
                                        score_threshold=score_threshold, with_payload=False)]
        if query is not None and query.indices:
            requests.append(models.QueryRequest(query=_client_sparse(query), using=SPARSE_VECTOR, limit=limit,
                                                with_payload=False))
        answers = self.client.query_batch_points(self.collection, requests)
        dense = self._hits(answers[0].points, False)
        return dense, (self._hits(answers[1].points, False) if len(answers) > 1 else [])

    def rrf(self, vector, query, prefetch, k, weights, limit, score_threshold=None):
        stages = [models.Prefetch(query=list(vector), using=DENSE_VECTOR, limit=prefetch, score_threshold=score_threshold)]
        used = [float(weights[0])]
        if query is not None and query.indices:
            stages.append(models.Prefetch(query=_client_sparse(query), using=SPARSE_VECTOR, limit=prefetch))
            used.append(float(weights[1]))
        response = self.client.query_points(self.collection, prefetch=stages,
                                            query=models.RrfQuery(rrf=models.Rrf(k=int(k), weights=used)),
                                            limit=limit, with_payload=True)
        return self._hits(response.points, True)

    def payloads(self, ids):
        if not ids:
            return {}
        return {str(p.id): p.payload for p in self.client.retrieve(self.collection, list(ids), with_payload=True)}

    def dense_vectors(self, ids):
        if not ids:
            return {}
        points = self.client.retrieve(self.collection, list(ids), with_payload=False, with_vectors=[DENSE_VECTOR])
        return {str(p.id): p.vector[DENSE_VECTOR] for p in points}

    def count(self) -> int:
        return self.client.count(self.collection, exact=True).count

    def close(self) -> None:
        pass  # the client is shared per process; close_all() closes it


class ClientWriter:
    def __init__(self, client: QdrantClient, collection: str, dim: int, layout: dict[str, int] | None = None) -> None:
        self.client, self.collection = client, collection
        create_collection(client, collection, dim, layout)

    def upsert(self, points) -> None:
        self.client.upsert(self.collection, [
            models.PointStruct(id=p.id, vector={DENSE_VECTOR: list(p.dense), SPARSE_VECTOR: _client_sparse(p.sparse)},
                               payload=p.payload) for p in points
        ], wait=True)

    def finish(self) -> None:
        pass

    def abort(self) -> None:
        pass  # left as an orphan; the next successful build removes it
