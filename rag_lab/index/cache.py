"""Embedding cache keyed by (model id, content hash): unchanged chunks are never re-embedded.

SQLite commits after every batch, so an interrupted build resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embeddings ("
            " model TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL,"
            " PRIMARY KEY (model, hash))"
        )
        self._db.commit()

    def get_many(self, model: str, hashes: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({marks})",
                [model, *chunk],
            )
            for digest, blob in rows:
                found[digest] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO embeddings (model, hash, vector) VALUES (?, ?, ?)",
            [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items.items()],
        )
        self._db.commit()

    def close(self) -> None:
        self._db.close()
