"""On-disk cache of LLM chunk contexts, keyed by (document hash, chunk hash, model id, prompt
version): a rebuild with the same documents, model and prompt makes no LLM call.

Rejected outcomes are cached too (``context`` NULL, with the reason), so a rebuild neither
pays for them again nor silently changes which chunks are uncontextualised. Every result is
committed as soon as it exists: an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

CONTEXT_CACHE_FILE = "chunk_contexts.sqlite"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheKey:
    doc_hash: str
    chunk_hash: str
    model_id: str
    prompt_version: str


@dataclass
class CachedContext:
    context: str | None  # None: rejected twice, the chunk stays uncontextualised
    reason: str | None  # why the last answer was rejected
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float


class ContextCache:
    def __init__(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS contexts ("
            " doc_hash TEXT NOT NULL, chunk_hash TEXT NOT NULL, model_id TEXT NOT NULL,"
            " prompt_version TEXT NOT NULL, context TEXT, reason TEXT, attempts INTEGER NOT NULL,"
            " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, seconds REAL NOT NULL,"
            " created REAL NOT NULL, PRIMARY KEY (doc_hash, chunk_hash, model_id, prompt_version))"
        )
        self._db.commit()

    def get(self, key: CacheKey) -> CachedContext | None:
        row = self._db.execute(
            "SELECT context, reason, attempts, prompt_tokens, completion_tokens, seconds FROM contexts"
            " WHERE doc_hash = ? AND chunk_hash = ? AND model_id = ? AND prompt_version = ?",
            (key.doc_hash, key.chunk_hash, key.model_id, key.prompt_version),
        ).fetchone()
        return CachedContext(*row) if row else None

    def contains(self, key: CacheKey) -> bool:
        return self.get(key) is not None

    def put(self, key: CacheKey, value: CachedContext) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO contexts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key.doc_hash, key.chunk_hash, key.model_id, key.prompt_version, value.context, value.reason,
             value.attempts, value.prompt_tokens, value.completion_tokens, value.seconds, time.time()),
        )
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM contexts").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ContextCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
