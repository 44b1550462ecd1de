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


def close_all() -> None:
    with _lock:
        for client in _clients.values():
            client.close()
        _clients.clear()


def create_collection(client: QdrantClient, name: str, dim: int) -> None:
    """Named dense (cosine) + named sparse (IDF) vectors: dense-only vs hybrid is a query-time choice."""
    if client.collection_exists(name):
        client.delete_collection(name)
    client.create_collection(
        collection_name=name,
        vectors_config={DENSE_VECTOR: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
        sparse_vectors_config={SPARSE_VECTOR: models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
