"""The index manifest: what was indexed, what was not and why, and how to query it the same way.

It is written last and atomically, so a manifest on disk always describes a complete index.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

DENSE_VECTOR = "dense"
SPARSE_VECTOR = "sparse"


@dataclass
class IndexManifest:
    dataset: str
    fingerprint: str
    collection: str
    bm25_dir: str
    embed_model: str
    embed_dim: int
    tokenizer: dict
    chunk_words: int
    overlap_words: int
    n_documents: int
    n_chunks: int
    bm25_k1: float
    bm25_b: float
    avg_chunk_tokens: float
    built_at: str
    loaded: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    dense_vector: str = DENSE_VECTOR
    sparse_vector: str = SPARSE_VECTOR

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2), encoding="utf-8")
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "IndexManifest":
        return cls(**json.loads(path.read_text(encoding="utf-8")))
