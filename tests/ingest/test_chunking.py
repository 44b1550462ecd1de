"""Chunking: word-measured sizes, no overlap by default, stable uuid node ids, readable chunk ids."""

from __future__ import annotations

import uuid

import pytest
from llama_index.core import Document
from llama_index.core.schema import NodeRelationship

from rag_lab.config import load_settings
from rag_lab.ingest import chunk_documents
from rag_lab.ingest.chunking import node_id_for

N_WORDS = 1200
WORDS = [f"w{i}" for i in range(N_WORDS)]  # every word distinct: overlap and loss are visible
TEXT = " ".join(" ".join(WORDS[i : i + 12]) + "." for i in range(0, N_WORDS, 12))


def _doc(text: str = TEXT, **meta) -> Document:
    return Document(text=text, metadata={"doc_id": "a.txt", "filename": "a.txt", **meta})


def _words(nodes) -> list[str]:
    return [w.rstrip(".") for n in nodes for w in n.get_content().split()]


def test_word_target_respected():
    nodes = chunk_documents([_doc()], chunk_words=500)
    sizes = [len(n.get_content().split()) for n in nodes]
    assert len(nodes) >= 3, sizes
    assert all(size <= 500 for size in sizes), sizes
    assert sum(sizes) == N_WORDS


def test_smaller_target_gives_more_chunks():
    assert len(chunk_documents([_doc()], chunk_words=100)) > len(chunk_documents([_doc()], chunk_words=500))


def test_zero_overlap_is_the_default_and_loses_nothing():
    assert load_settings().chunk_overlap_words == 0
    nodes = chunk_documents([_doc()])  # default arguments
    assert _words(nodes) == WORDS  # each word exactly once, in order


def test_overlap_repeats_words_across_chunks():
    nodes = chunk_documents([_doc()], chunk_words=500, overlap_words=60)
    words = _words(nodes)
    assert len(words) > N_WORDS
    assert sorted(set(words)) == sorted(WORDS)
    first, second = nodes[0].get_content().split(), nodes[1].get_content().split()
    assert set(first) & set(second)


def test_chunks_end_on_sentence_boundaries():
    for node in chunk_documents([_doc()], chunk_words=500)[:-1]:
        assert node.get_content().rstrip().endswith(".")


def test_node_ids_are_stable_uuids_of_chunk_ids():
    first = chunk_documents([_doc(page=3)], chunk_words=200)
    second = chunk_documents([_doc(page=3)], chunk_words=200)
    assert [n.node_id for n in first] == [n.node_id for n in second]
    assert len({n.node_id for n in first}) == len(first)
    for node in first:
        assert uuid.UUID(node.node_id).version == 5
        assert node.node_id == node_id_for(node.metadata["chunk_id"])


def test_chunk_id_format():
    paged = chunk_documents([_doc(page=3)], chunk_words=500)
    assert [n.metadata["chunk_id"] for n in paged] == [f"a.txt#p3#c{i}" for i in range(len(paged))]
    plain = chunk_documents([_doc()], chunk_words=500)
    assert [n.metadata["chunk_id"] for n in plain] == [f"a.txt#c{i}" for i in range(len(plain))]
    # same text, different page or document → different ids
    assert not {n.node_id for n in paged} & {n.node_id for n in plain}


def test_metadata_is_kept_but_hidden_from_the_embedder():
    doc = _doc(page=1, source_url="https://example.org/a.pdf")
    node = chunk_documents([doc])[0]
    assert node.metadata["source_url"] == "https://example.org/a.pdf"
    assert node.metadata["page"] == 1
    assert node.relationships[NodeRelationship.SOURCE].node_id == doc.doc_id
    from llama_index.core.schema import MetadataMode

    assert node.get_content(MetadataMode.EMBED) == node.get_content()
    assert "chunk_id" not in node.get_content(MetadataMode.LLM)


@pytest.mark.parametrize("text", ["short.", "one line without a full stop"])
def test_short_text_is_one_chunk(text):
    nodes = chunk_documents([_doc(text)], chunk_words=500)
    assert [n.get_content() for n in nodes] == [text]
