"""Build (or reuse) one persistent index per corpus: vectors with a named dense and a named
sparse vector (an edge shard, or a Qdrant collection), plus a bm25s index over the same chunks
with the same ids.

Safety: each build writes a new generation (shard or collection, and BM25 folder); the manifest
that points at them is written last and atomically. A crash mid-build leaves the previous complete
index in use (and orphans that the next build removes), never a half-built one; readers that
opened the previous generation keep it until the build after next.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import bm25s
import numpy as np
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.utils import node_to_metadata_dict

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.index.cache import EmbeddingCache, content_hash
from rag_lab.index.backend import PointData, SparseQuery
from rag_lab.index.manifest import IndexManifest
from rag_lab.index.open import create_writer, generation_exists, generation_name, open_backend, remove_generations
from rag_lab.index.paths import IndexPaths
from rag_lab.index.source import BM25_B, BM25_K1, corpus_fingerprint, files_signature, source_path
from rag_lab.errors import IndexNotReadyError
from rag_lab.ingest import chunk_documents
from rag_lab.ingest.loaders import ParseMany
from rag_lab.ingest.contextual import contextualize, index_text, index_variant, variant_fingerprint
from rag_lab.ingest.parse_cache import ParseCache
from rag_lab.models import embed_model_id, get_embed_model
from rag_lab.progress import progress_bar
from rag_lab.tokenizer import DomainTokenizer, TokenizerSpec, sparse_document_vector

UPSERT_BATCH = 256


@dataclass
class BuildResult:
    manifest: IndexManifest
    embedded: int
    reused: int
    up_to_date: bool
    seconds: float

    def summary(self) -> str:
        m = self.manifest
        state = "up to date" if self.up_to_date else "built"
        return (
            f"{m.dataset}: index {state} — {m.n_documents} documents, {m.n_chunks} chunks; "
            f"embeddings: {self.reused} reused, {self.embedded} computed; "
            f"{len(m.skipped)} file(s) skipped; {self.seconds:.1f}s"
        )


# Embeds batches of texts elsewhere (Ray actors): yields (batch number, vectors) as each one lands.
EmbedBatches = Callable[[list[list[str]]], Iterator[tuple[int, list[list[float]]]]]


@dataclass(frozen=True)
class BuildExecutor:
    """Where a build's heavy steps run: ``parse_many`` (the PDFs) and ``embed_batches`` (the chunks);
    None is this process. Everything else — chunking, tokenizing, writing — stays in the driver."""

    parse_many: ParseMany | None = None
    embed_batches: EmbedBatches | None = None


def embed_nodes(
    nodes: list[TextNode], settings: Settings, cache: EmbeddingCache, progress: bool = True,
    texts: list[str] | None = None, embed_batches: EmbedBatches | None = None,
) -> tuple[np.ndarray, int, int]:
    """Embeddings for every node (of ``texts`` when given: contextual variants embed context +
    chunk); cached ones are reused, new ones are cached per batch. ``embed_batches`` computes the
    batches elsewhere (the same batches, so the same vectors)."""
    model_id = embed_model_id(settings)
    contents = texts if texts is not None else [n.get_content() for n in nodes]
    hashes = [content_hash(t) for t in contents]
    known = cache.get_many(model_id, hashes)
    missing = [h for h in dict.fromkeys(hashes) if h not in known]
    if missing:
        by_hash = dict(zip(hashes, contents))
        missing.sort(key=lambda h: len(by_hash[h]))  # texts of like length batched together: less padding
        size = max(settings.embed_batch_size, 1) * 2
        batches = [missing[start : start + size] for start in range(0, len(missing), size)]
        if embed_batches is None:  # in this process, one batch after the other
            model = get_embed_model(settings)

            def embed_batches(parts: list[list[str]]) -> Iterator[tuple[int, list[list[float]]]]:
                for number, part in enumerate(parts):
                    yield number, model.get_text_embedding_batch(part)
        bar = progress_bar(total=len(missing), desc="embedding", unit="chunk", enabled=progress)
        for number, vectors in embed_batches([[by_hash[h] for h in part] for part in batches]):
            part = batches[number]
            fresh = {h: np.asarray(v, dtype=np.float32) for h, v in zip(part, vectors)}
            cache.put_many(model_id, fresh)  # committed now: an interrupted build resumes here
            known.update(fresh)
            bar.update(len(part))
        bar.close()
    matrix = np.stack([known[h] for h in hashes]) if hashes else np.zeros((0, 0), np.float32)
    fresh_hashes = set(missing)
    reused = sum(1 for h in hashes if h not in fresh_hashes)
    return matrix, reused, len(missing)


def _points(nodes, vectors, token_lists, avg_len):
    for node, vector, tokens in zip(nodes, vectors, token_lists):
        indices, values = sparse_document_vector(tokens, len(tokens), avg_len, BM25_K1, BM25_B)
        payload = node_to_metadata_dict(node, remove_text=False, flat_metadata=False)
        yield PointData(node.node_id, vector.tolist(), SparseQuery(list(indices), list(values)), payload)


def _build_bm25(nodes: list[TextNode], token_lists: list[list[str]], folder: Path) -> None:
    from llama_index.retrievers.bm25 import BM25Retriever

    bm25 = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    bm25.index(token_lists, show_progress=False)
    corpus = [node_to_metadata_dict(n, remove_text=False, flat_metadata=False) | {"node_id": n.node_id} for n in nodes]
    bm25.corpus = corpus
    retriever = BM25Retriever(existing_bm25=bm25, similarity_top_k=min(10, len(nodes)))
    retriever.corpus = corpus
    folder.mkdir(parents=True, exist_ok=True)
    retriever.persist(str(folder), show_progress=False)


def build_index(dataset: Dataset, settings: Settings, *, force: bool = False, progress: bool = True,
                contextual: str = "none", yes: bool = False, context_in_prompt: bool = False,
                echo=print, llm=None, executor: AbstractContextManager[BuildExecutor] | None = None) -> BuildResult:
    """Build (or reuse) the index. A failed build is recorded next to the index, so that a later
    search or question says what failed and how to fix it instead of "build it first".

    ``contextual`` (annotations | llm | both) builds that variant beside the plain index: the
    chunk context is prepended to what is embedded and BM25-indexed; node text stays the chunk.
    ``llm`` overrides the configured LLM for the chunk contexts (tests inject a transport this way).
    ``executor`` (a context manager yielding a :class:`BuildExecutor`, entered here) parses and
    embeds elsewhere — :func:`rag_lab.distributed.ingest.ray_executor` on Ray; the index written
    is the same as a local build's. The executor plugs in from above: this module knows no Ray."""
    paths = IndexPaths.for_dataset(settings, dataset, index_variant(contextual))
    try:
        with executor if executor is not None else nullcontext(BuildExecutor()) as chosen:
            result = _build_index(dataset, settings, paths, force=force, progress=progress, contextual=contextual,
                                  yes=yes, context_in_prompt=context_in_prompt, echo=echo, llm=llm,
                                  executor=chosen)
    except Exception as exc:
        record_failure(paths.failure, dataset, exc)
        raise
    paths.failure.unlink(missing_ok=True)
    return result


def record_failure(path: Path, dataset: Dataset, exc: Exception) -> None:
    hint = getattr(exc, "hint", None) or "run the same command with --debug to see where it failed"
    record = {"dataset": dataset.name, "source": source_path(dataset), "error": getattr(exc, "message", None) or
              f"{type(exc).__name__}: {exc}", "hint": hint,
              "failed_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    except OSError:
        pass  # never hide the build's own error behind a bookkeeping one


def _up_to_date(settings: Settings, paths: IndexPaths, previous: IndexManifest | None, fingerprint: str) -> bool:
    if previous is None or previous.fingerprint != fingerprint or not (paths.root / previous.bm25_dir).is_dir():
        return False
    if not generation_exists(settings, paths, previous.collection):
        return False
    return open_backend(settings, paths, previous.collection).count() == previous.n_chunks


def _build_index(dataset: Dataset, settings: Settings, paths: IndexPaths, *, force: bool = False, progress: bool = True,
                 contextual: str = "none", yes: bool = False, context_in_prompt: bool = False,
                 echo=print, llm=None, executor: BuildExecutor = BuildExecutor()) -> BuildResult:
    started = time.perf_counter()
    variant = index_variant(contextual)
    spec = TokenizerSpec()
    fingerprint = variant_fingerprint(corpus_fingerprint(dataset, settings, spec), contextual or "none", settings,
                                      dataset.root, context_in_prompt)
    try:
        previous = IndexManifest.load(paths.manifest) if paths.manifest.exists() else None
    except IndexNotReadyError:  # a damaged manifest: rebuild (the new one replaces it)
        previous = None
    if not force and _up_to_date(settings, paths, previous, fingerprint):
        signature = files_signature(dataset)
        if previous.source_path != source_path(dataset) or previous.files_signature != signature:
            previous.source_path, previous.files_signature = source_path(dataset), signature  # touched, not changed
            previous.save(paths.manifest)
        return BuildResult(previous, 0, previous.n_chunks, True, time.perf_counter() - started)

    signature = files_signature(dataset)  # before reading: a file edited mid-build shows up as stale
    with ParseCache(settings.cache_dir / "parsed.sqlite") as parse_cache:
        documents, report = dataset.load_documents(parse_cache=parse_cache, progress=progress,
                                                   parse_many=executor.parse_many)
    nodes = chunk_documents(documents, settings.chunk_words, settings.chunk_overlap_words)
    context_report = None
    if variant:  # contexts first: an unconfirmed or failed LLM run must not cost an embedding pass
        context_report = contextualize(nodes, documents, contextual, settings, dataset_root=dataset.root, yes=yes,
                                       show_in_prompt=context_in_prompt, progress=progress, echo=echo, llm=llm)
    texts = [index_text(n) for n in nodes]  # context + chunk for variants, the chunk otherwise
    cache = EmbeddingCache(settings.cache_dir / "embeddings.sqlite")
    try:
        vectors, reused, embedded = embed_nodes(nodes, settings, cache, progress, texts, executor.embed_batches)
    finally:
        cache.close()

    tokenizer = DomainTokenizer(spec)
    token_lists = [tokenizer(t) for t in texts]
    avg_len = float(np.mean([len(t) for t in token_lists])) if token_lists else 0.0

    # Unique per build (two builds in one second must not share, and so overwrite, a generation).
    build_id = f"{fingerprint[:10]}-{int(time.time())}-{uuid.uuid4().hex[:6]}"
    location = generation_name(paths, build_id)
    writer = create_writer(settings, paths, location, int(vectors.shape[1]))
    try:
        bar = progress_bar(total=len(nodes), desc=f"writing {paths.backend} index", unit="chunk", enabled=progress)
        points = list(_points(nodes, vectors, token_lists, avg_len))
        for start in range(0, len(points), UPSERT_BATCH):
            writer.upsert(points[start : start + UPSERT_BATCH])
            bar.update(len(points[start : start + UPSERT_BATCH]))
        bar.close()
        writer.finish()
    except BaseException:
        writer.abort()
        raise
    bm25_dir = f"bm25-{build_id}"
    _build_bm25(nodes, token_lists, paths.root / bm25_dir)

    manifest = IndexManifest(
        dataset=dataset.name, fingerprint=fingerprint, collection=location, bm25_dir=bm25_dir,
        embed_model=embed_model_id(settings), embed_dim=int(vectors.shape[1]), tokenizer=spec.to_dict(),
        chunk_words=settings.chunk_words, overlap_words=settings.chunk_overlap_words,
        n_documents=len(report.loaded), n_chunks=len(nodes), bm25_k1=BM25_K1, bm25_b=BM25_B,
        avg_chunk_tokens=avg_len, built_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        loaded=report.loaded if dataset.kind == "folder" else [], skipped=report.to_dict()["skipped"],
        contextual=contextual or "none", contextual_report=context_report.to_dict() if context_report else {},
        source_path=source_path(dataset), files_signature=signature, backend=paths.backend,
    )
    manifest.save(paths.manifest)  # the commit point
    # Keep the generation readers may still hold (the one the old manifest named); drop the rest.
    keep = {location} | ({previous.collection} if previous is not None and previous.collection != location else set())
    remove_generations(settings, paths, keep)
    return BuildResult(manifest, embedded, reused, False, time.perf_counter() - started)
