"""Which chunks questions are made from: the index's chunks, seeded and spread over documents.

Every document gets its share before any gets two: documents are taken in a seeded order, one chunk
each per round, each document's chunks in a seeded order too. Chunks too short to ask about (a page
number, a heading) are not eligible.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from dataclasses import dataclass

from llama_index.core.schema import TextNode

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.errors import DatasetError
from rag_lab.ingest import chunk_documents
from rag_lab.ingest.parse_cache import ParseCache

# A chunk with fewer words states too little to ask about.
MIN_CHUNK_WORDS = 25


@dataclass(frozen=True)
class SourceChunk:
    """A chunk questions can be made from, with what a ``qa.jsonl`` line names as its source."""

    chunk_id: str
    node_id: str
    document: str  # the document key: a file relative to the documents folder, or a BEIR _id
    text: str
    page: int | None = None
    title: str = ""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def source_chunk(node: TextNode) -> SourceChunk:
    meta = node.metadata
    document = str(meta.get("doc_id"))
    return SourceChunk(meta.get("chunk_id", node.node_id), node.node_id, document, node.get_content(),
                       meta.get("page"), str(meta.get("title") or meta.get("filename") or document))


def corpus_chunks(dataset: Dataset, settings: Settings) -> list[SourceChunk]:
    """The dataset's chunks as the index makes them (same chunking settings, same ids); parsed PDFs
    come from the parse cache. A corpus with no text to ask about is an error naming it."""
    with ParseCache(settings.cache_dir / "parsed.sqlite") as parse_cache:
        documents, _ = dataset.load_documents(parse_cache=parse_cache, progress=False)
    nodes = chunk_documents(documents, settings.chunk_words, settings.chunk_overlap_words)
    chunks = [c for c in map(source_chunk, nodes) if len(c.text.split()) >= MIN_CHUNK_WORDS]
    if not chunks:
        where = dataset.documents_dir or dataset.corpus_file
        raise DatasetError(f"{where}: no indexable text to make questions from ({len(documents)} document(s), "
                           f"no chunk of {MIN_CHUNK_WORDS}+ words)",
                           "add documents with text (scanned PDFs need OCR first)")
    return chunks


def spread_order(chunks: list[SourceChunk], seed: int) -> list[SourceChunk]:
    """Every chunk once, in round-robin over documents (seeded document and chunk orders): the first
    k chunks cover min(k, documents) documents."""
    rng = random.Random(seed)
    by_document: dict[str, list[SourceChunk]] = defaultdict(list)
    for chunk in chunks:
        by_document[chunk.document].append(chunk)
    documents = sorted(by_document)
    rng.shuffle(documents)
    queues = []
    for document in documents:
        own = list(by_document[document])
        rng.shuffle(own)
        queues.append(own)
    ordered = []
    for round_ in range(max((len(q) for q in queues), default=0)):
        ordered.extend(q[round_] for q in queues if round_ < len(q))
    return ordered
