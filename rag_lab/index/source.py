"""Which source an index was built from, and whether that source has changed since.

Two fingerprints: ``corpus_fingerprint`` hashes every corpus file's bytes plus the index
parameters (decides whether a build is needed); ``files_signature`` hashes only names, sizes and
modification times (cheap enough to check on every open; when it differs the content fingerprint
decides, so a touched-but-unchanged file does not warn).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.errors import IndexNotReadyError, StaleIndexWarning, warn_at_caller
from rag_lab.index.manifest import IndexManifest
from rag_lab.ingest.loaders import INGEST_VERSION
from rag_lab.tokenizer import TokenizerSpec

BM25_K1 = 0.9  # bm25s/Pyserini-style BEIR settings: 0.676 nDCG@10 on SciFact
BM25_B = 0.4


def _relative(dataset: Dataset, path: Path) -> str:
    root = dataset.documents_dir or dataset.root
    return str(path.relative_to(root) if path.is_relative_to(root) else path.name)


def corpus_fingerprint(dataset: Dataset, settings: Settings, spec: TokenizerSpec) -> str:
    from rag_lab.models import embed_model_id

    digest = hashlib.sha256()
    params = {
        "ingest": INGEST_VERSION, "embed": embed_model_id(settings), "tokenizer": spec.to_dict(), "chunk": settings.chunk_words,
        "overlap": settings.chunk_overlap_words, "bm25": [BM25_K1, BM25_B], "source_urls": dataset.source_urls,
    }
    digest.update(json.dumps(params, sort_keys=True).encode())
    for path in dataset.corpus_files:
        digest.update(_relative(dataset, path).encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def files_signature(dataset: Dataset) -> str:
    digest = hashlib.sha256()
    for path in dataset.corpus_files:
        stat = path.stat()
        digest.update(f"{_relative(dataset, path)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def source_path(dataset: Dataset) -> str:
    return str(Path(dataset.root).resolve())


def check_source(manifest: IndexManifest, dataset: Dataset, settings: Settings, manifest_file: Path) -> None:
    """Refuse an index built from another folder; warn when its folder changed since indexing."""
    asked = source_path(dataset)
    if manifest.source_path and manifest.source_path != asked:
        raise IndexNotReadyError(
            f"The index in {manifest_file.parent} was built from {manifest.source_path}, "
            f"not from {asked} (the dataset asked for)",
            f"build this folder's own index: rag-lab index {asked}",
        )
    if manifest.files_signature and files_signature(dataset) == manifest.files_signature:
        return
    if corpus_fingerprint(dataset, settings, TokenizerSpec.from_dict(manifest.tokenizer)) != manifest.fingerprint:
        warn_at_caller(StaleIndexWarning(
            f"{asked} has changed since it was indexed ({manifest.built_at}); results come from the old "
            f"index — refresh it with: rag-lab index {asked}"
        ))
