"""Ingest: files and BEIR corpora → LlamaIndex documents → chunks (``TextNode``)."""

from rag_lab.ingest.chunking import chunk_documents
from rag_lab.ingest.loaders import IngestReport, SkippedFile, load_beir_corpus, load_folder

__all__ = ["IngestReport", "SkippedFile", "chunk_documents", "load_beir_corpus", "load_folder"]
