"""Parsed-page cache: a PDF's page texts keyed by (file content hash, loader version).

Parsing is most of an index build (≈ 4 min for texas_childcare_full on two cores); with this
cache a re-index, a new chunk size or a new embedding model never re-parses an unchanged file.
SQLite commits after every file, so an interrupted build keeps what it parsed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ParseCache:
    """``get(hash, version) -> list[str] | None`` and ``put(hash, version, pages)``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS parsed ("
            " hash TEXT NOT NULL, version TEXT NOT NULL, pages TEXT NOT NULL,"
            " PRIMARY KEY (hash, version))"
        )
        self._db.commit()
        self.hits = 0
        self.misses = 0

    def get(self, digest: str, version: str) -> list[str] | None:
        row = self._db.execute("SELECT pages FROM parsed WHERE hash = ? AND version = ?", (digest, version)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return list(json.loads(row[0]))

    def put(self, digest: str, version: str, pages: list[str]) -> None:
        self._db.execute("INSERT OR REPLACE INTO parsed (hash, version, pages) VALUES (?, ?, ?)",
                         (digest, version, json.dumps(pages, ensure_ascii=False)))
        self._db.commit()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ParseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
