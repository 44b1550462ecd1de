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
    contextual: str = "none"  # the contextual variant: none | annotations | llm | both
    contextual_report: dict = field(default_factory=dict)  # chunks annotated, LLM calls/tokens/time, rejects
    source_path: str = ""  # the resolved dataset folder this index was built from
    files_signature: str = ""  # names, sizes and mtimes of the corpus files at build time
    backend: str = "local"  # the vector engine that holds the vectors (edge | local | server)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2), encoding="utf-8")
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "IndexManifest":
        """The manifest at ``path``; a damaged one is one clear error naming the file and line."""
        from rag_lab.errors import IndexNotReadyError

        hint = f"rebuild the index: rag-lab index <dataset> --force (or delete {path.parent})"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise IndexNotReadyError(f"{path}: line {exc.lineno} column {exc.colno}: {exc.msg} "
                                     "(the index manifest is damaged)", hint) from None
        except UnicodeDecodeError:
            raise IndexNotReadyError(f"{path}: not UTF-8 text (the index manifest is damaged)", hint) from None
        if not isinstance(data, dict):
            raise IndexNotReadyError(f"{path}: line 1: expected a JSON object (the index manifest is damaged)", hint)
        try:
            return cls(**data)
        except TypeError as exc:  # missing or unknown fields: written by another version, or edited
            raise IndexNotReadyError(f"{path}: not an index manifest of this rag-lab version ({exc})", hint) from None
