"""Open a built index for querying: the one object every retriever is given."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from llama_index.core.base.embeddings.base import BaseEmbedding
from qdrant_client import QdrantClient

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.errors import IndexNotReadyError
from rag_lab.index.manifest import IndexManifest
from rag_lab.index.paths import IndexPaths
from rag_lab.index.store import open_qdrant
from rag_lab.models import embed_model_id, get_embed_model
from rag_lab.tokenizer import DomainTokenizer, TokenizerSpec


@dataclass
class CorpusIndex:
    settings: Settings
    manifest: IndexManifest
    paths: IndexPaths
    client: QdrantClient = field(repr=False)

    @classmethod
    def open(cls, dataset: Dataset | str, settings: Settings) -> "CorpusIndex":
        name = dataset if isinstance(dataset, str) else dataset.name
        paths = IndexPaths.for_dataset(settings, name)
        if not paths.manifest.exists():
            raise IndexNotReadyError(
                f"Dataset {name!r} has no complete index under {paths.root}",
                f"build it first: rag-lab index {name if isinstance(dataset, str) else dataset.root}",
            )
        manifest = IndexManifest.load(paths.manifest)
        client = open_qdrant(settings)
        if not client.collection_exists(manifest.collection):
            raise IndexNotReadyError(
                f"The index manifest of {name!r} names collection {manifest.collection!r}, which is missing",
                f"rebuild it: rag-lab index {name} --force",
            )
        if manifest.embed_model != embed_model_id(settings):
            raise IndexNotReadyError(
                f"{name!r} was indexed with {manifest.embed_model}, but the configured embedding model is "
                f"{embed_model_id(settings)}",
                f"rebuild with `rag-lab index {name}` or set the embedding settings back",
            )
        return cls(settings, manifest, paths, client)

    @property
    def name(self) -> str:
        return self.manifest.dataset

    @property
    def collection(self) -> str:
        return self.manifest.collection

    @cached_property
    def tokenizer(self) -> DomainTokenizer:
        """Rebuilt from the spec stored at index time, so queries tokenize as documents did."""
        return DomainTokenizer(TokenizerSpec.from_dict(self.manifest.tokenizer))

    @cached_property
    def embed_model(self) -> BaseEmbedding:
        return get_embed_model(self.settings)

    @cached_property
    def bm25(self):
        """The persisted stock ``BM25Retriever`` (its bm25s index and node corpus)."""
        from llama_index.retrievers.bm25 import BM25Retriever

        return BM25Retriever.from_persist_dir(self.bm25_dir)

    @property
    def bm25_dir(self) -> str:
        return str(self.paths.root / self.manifest.bm25_dir)
