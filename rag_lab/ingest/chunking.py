"""Line- and sentence-aware chunking measured in words, with stable chunk ids."""

from __future__ import annotations

import uuid

from llama_index.core import Document
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import NodeRelationship, TextNode

# Node ids are uuid5 of the human-readable chunk id: stable across runs, valid Qdrant point ids.
_NAMESPACE = uuid.UUID("6f1c8a52-3d0e-4a57-9a43-2f5d7f6b0c11")


def _words(text: str) -> list[str]:
    return text.split()


def node_id_for(chunk_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, chunk_id))


def chunk_documents(
    documents: list[Document], chunk_words: int = 500, overlap_words: int = 0
) -> list[TextNode]:
    """Split documents into ≈``chunk_words``-word chunks: PDF pages on line, then sentence
    boundaries; other texts on sentence boundaries."""
    sentences = SentenceSplitter(
        chunk_size=chunk_words, chunk_overlap=overlap_words, tokenizer=_words,
        include_metadata=False, include_prev_next_rel=False,
    )
    # A PDF page is laid out in lines, its tables in rows ("… | Annual: $5,412 | …"): lines first,
    # so that a row is never cut (the sentence rules would cut it at the comma of an amount).
    # Plain-text corpora (SciFact) keep sentence-first chunking, and with it their chunks.
    lines = SentenceSplitter(
        chunk_size=chunk_words, chunk_overlap=overlap_words, tokenizer=_words, paragraph_separator="\n",
        include_metadata=False, include_prev_next_rel=False,
    )
    nodes: list[TextNode] = []
    for document in documents:
        meta = document.metadata
        page = meta.get("page")
        base = f"{meta['doc_id']}#p{page}" if page is not None else str(meta["doc_id"])
        splitter = lines if page is not None else sentences
        for position, text in enumerate(splitter.split_text(document.text)):
            chunk_id = f"{base}#c{position}"
            node = TextNode(
                id_=node_id_for(chunk_id),
                text=text,
                metadata={**meta, "chunk_id": chunk_id},
                excluded_embed_metadata_keys=list(meta) + ["chunk_id"],
                excluded_llm_metadata_keys=["chunk_id", "doc_id"],
            )
            node.relationships[NodeRelationship.SOURCE] = document.as_related_node_info()
            nodes.append(node)
    return nodes
