"""Open a built index for querying: the one object every retriever is given."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from llama_index.core.base.embeddings.base import BaseEmbedding

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.errors import IndexNotReadyError
from rag_lab.index.manifest import IndexManifest
from rag_lab.index.paths import IndexPaths
from rag_lab.index.source import check_source
from rag_lab.index.backend import VectorBackend
from rag_lab.index.open import generation_exists, open_backend
from rag_lab.models import embed_model_id, get_embed_model
from rag_lab.tokenizer import DomainTokenizer, TokenizerSpec


@dataclass
class CorpusIndex:
    settings: Settings
    manifest: IndexManifest
    paths: IndexPaths
    vectors: VectorBackend = field(repr=False)

    @classmethod
    def open(cls, dataset: Dataset | str, settings: Settings, contextual: str | None = None) -> "CorpusIndex":
        """The dataset's complete index, checked against the folder it is asked for;
        ``contextual`` (annotations | llm | both) opens that variant."""
        from rag_lab.ingest.contextual import index_variant

        given = dataset if isinstance(dataset, str) else None  # a hint repeats what the user typed
        if isinstance(dataset, str):
            from rag_lab.datasets import resolve_dataset

            dataset = resolve_dataset(dataset, settings.datasets_dir)
        variant = index_variant(contextual)
        paths = IndexPaths.for_dataset(settings, dataset, variant)
        if not paths.manifest.exists():
            flag = f" --contextual {contextual}" if variant else ""
            raise _not_ready(dataset, settings, paths, (given or str(dataset.root)) + flag,
                             f"contextual {contextual} " if variant else "")
        manifest = IndexManifest.load(paths.manifest)
        check_source(manifest, dataset, settings, paths.manifest)
        if not generation_exists(settings, paths, manifest.collection):
            raise IndexNotReadyError(
                f"The index manifest of {dataset.name!r} names {paths.backend} index {manifest.collection!r}, "
                "which is missing",
                f"rebuild it: rag-lab index {given or dataset.root} --force",
            )
        if manifest.embed_model != embed_model_id(settings):
            raise IndexNotReadyError(
                f"{dataset.name!r} was indexed with {manifest.embed_model}, but the configured embedding model is "
                f"{embed_model_id(settings)}",
                f"rebuild with `rag-lab index {dataset.root}` or set the embedding settings back",
            )
        return cls(settings, manifest, paths, open_backend(settings, paths, manifest.collection))

    @property
    def name(self) -> str:
        return self.manifest.dataset

    @property
    def collection(self) -> str:
        """The generation the manifest names: a collection (local/server) or a shard folder (edge)."""
        return self.manifest.collection

    @property
    def backend(self) -> str:
        return self.paths.backend

    @property
    def client(self):
        """The qdrant-client ``QdrantClient`` (local and server backends only)."""
        if self.paths.backend == "edge":
            raise AttributeError("the edge backend has no QdrantClient; use CorpusIndex.vectors")
        from rag_lab.index.store import open_qdrant

        return open_qdrant(self.settings)

    def vector_store(self):
        """This index as a LlamaIndex vector store (``QdrantVectorStore`` on local/server,
        :class:`rag_lab.index.llama_store.EdgeVectorStore` on edge), for
        ``VectorStoreIndex.from_vector_store(store, embed_model=index.embed_model)``."""
        from rag_lab.index.llama_store import vector_store

        return vector_store(self)

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


def _not_ready(dataset: Dataset, settings: Settings, paths: IndexPaths, given: str, kind: str = "") -> IndexNotReadyError:
    """Why there is no index to open: a failed build, an old layout, or never built."""
    import json

    try:
        failed = json.loads(paths.failure.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        failed = None
    if isinstance(failed, dict):  # "build it first" would send the user round in a loop: say what failed
        return IndexNotReadyError(
            f"Dataset {dataset.name!r} has no index: its last build failed ({failed.get('failed_at', '?')}): "
            f"{failed.get('error')}",
            f"{failed.get('hint')}, then run: rag-lab index {given}",
        )
    if paths.backend == "server" and (unreachable := _unreachable_server(settings)) is not None:
        # no manifest for the server yet may just mean the server is down: say that, not "build it first"
        return IndexNotReadyError(unreachable, "start the Qdrant server and check QDRANT_URL, or unset QDRANT_URL "
                                               "to use the embedded store")
    if IndexPaths.legacy_manifest(settings, dataset).exists():
        return IndexNotReadyError(
            f"{dataset.name!r} has an index in the old layout ({IndexPaths.legacy_manifest(settings, dataset).parent}, "
            f"keyed by folder name only), which this version no longer reads",
            f"rebuild it (embeddings are reused from the cache): rag-lab index {given}",
        )
    return IndexNotReadyError(
        f"Dataset {dataset.name!r} has no complete {kind}index under {paths.root} (for {dataset.root})",
        f"build it first: rag-lab index {given}",
    )


def _unreachable_server(settings: Settings) -> str | None:
    """"cannot reach the Qdrant server at URL (reason)" when the configured server does not answer, else None."""
    from rag_lab.index.store import open_qdrant, unreachable_server_message

    try:
        open_qdrant(settings).get_collections()
    except Exception as exc:  # noqa: BLE001 - only a transport failure is reported; anything else is not ours here
        message = unreachable_server_message(exc)
        return message.split(" — ", 1)[0] if message else None
    return None
