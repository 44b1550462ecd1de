"""Contextual index variants on a tiny folder dataset: built beside the plain index, context +
chunk embedded and BM25-indexed, the original chunk returned, fingerprint and cache behaviour."""

from __future__ import annotations

import json

import pytest

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.errors import ConfigError, IndexNotReadyError
from rag_lab.index import CorpusIndex, build_index
from rag_lab.index.cache import EmbeddingCache, content_hash
from rag_lab.index.open import generations
from rag_lab.index.paths import index_folder_name
from rag_lab.models import embed_model_id
from rag_lab.retrieve import INDEX_MODES, build_retriever
from tests.ingest.test_contextual import GOOD, scripted

FILES = {
    "alpha.txt": "Alpha notes. The heron nests beside the quarry lake every spring.",
    "beta.md": "# Beta\n\nCopper kettles are polished with lemon and salt before the fair.",
    "gamma.rst": "Gamma\n=====\n\nThe night train to Tromsø leaves at nine from platform four.",
}
ANNOTATIONS = """annotations:
  - pattern: "alpha.txt"
    context: "Field diary of the quokka survey team, volume one."
  - pattern: "*.md"
    context: "Household tips collected by the village almanac."
"""


@pytest.fixture
def lab(tmp_path):
    root = tmp_path / "datasets" / "tiny"
    (root / "docs").mkdir(parents=True)
    for name, text in FILES.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / "dataset.json").write_text(json.dumps({"kind": "folder", "documents": "docs"}))
    (root / "annotations.yaml").write_text(ANNOTATIONS)
    settings = load_settings(data_dir=tmp_path / "data", datasets_dir=tmp_path / "datasets")
    return settings, resolve_dataset("tiny", settings.datasets_dir)


def texts_of(results) -> list[str]:
    return [r.node.get_content() for r in results]


def test_annotations_variant_is_built_beside_the_plain_index(lab):
    settings, dataset = lab
    plain = build_index(dataset, settings, progress=False)
    variant = build_index(dataset, settings, progress=False, contextual="annotations", echo=lambda _: None)
    assert variant.manifest.contextual == "annotations" and plain.manifest.contextual == "none"
    assert variant.manifest.fingerprint != plain.manifest.fingerprint
    assert variant.manifest.contextual_report["annotated"] == 2
    assert variant.manifest.contextual_report["unannotated_documents"] == ["gamma.rst"]
    # both complete, in their own folders and collections; the variant did not remove the plain one
    plain_index = CorpusIndex.open(dataset, settings)
    ctx_index = CorpusIndex.open(dataset, settings, "annotations")
    assert plain.manifest.collection in generations(settings, plain_index.paths)
    assert variant.manifest.collection in generations(settings, ctx_index.paths)
    assert plain_index.paths.root != ctx_index.paths.root
    assert ctx_index.paths.root.name == index_folder_name("tiny", dataset.root, "contextual-annotations")

    # the context is searchable (BM25 and dense) ...
    for mode in INDEX_MODES:
        results = build_retriever(mode, settings, dataset, contextual="annotations", top_k=1).retrieve("quokka survey diary")
        assert results[0].node.metadata["filename"] == "alpha.txt", mode
        # ... but the node text handed to generation is the original chunk
        assert texts_of(results) == ["Alpha notes. The heron nests beside the quarry lake every spring."]
        assert results[0].node.metadata["chunk_context"] == "Field diary of the quokka survey team, volume one."
    plain_bm25 = build_retriever("bm25", settings, dataset, top_k=3).retrieve("quokka")
    assert all(r.score == 0 for r in plain_bm25) or not plain_bm25  # the word exists only in the annotation

    # what was embedded is context + blank line + chunk
    cache = EmbeddingCache(settings.cache_dir / "embeddings.sqlite")
    try:
        embedded = "Field diary of the quokka survey team, volume one.\n\n" + FILES["alpha.txt"]
        assert content_hash(embedded) in cache.get_many(embed_model_id(settings), [content_hash(embedded)])
    finally:
        cache.close()


def test_variant_rebuilds_when_annotations_change_and_is_reused_otherwise(lab):
    settings, dataset = lab
    first = build_index(dataset, settings, progress=False, contextual="annotations", echo=lambda _: None)
    again = build_index(dataset, settings, progress=False, contextual="annotations", echo=lambda _: None)
    assert again.up_to_date and again.manifest.fingerprint == first.manifest.fingerprint
    (dataset.root / "annotations.yaml").write_text(ANNOTATIONS.replace("volume one", "volume two"))
    changed = build_index(dataset, settings, progress=False, contextual="annotations", echo=lambda _: None)
    assert not changed.up_to_date and changed.manifest.fingerprint != first.manifest.fingerprint
    assert changed.embedded == 1 and changed.reused == 2  # only the changed chunk is embedded again


def test_llm_variant_second_build_is_served_from_the_cache(lab):
    settings, dataset = lab
    printed: list[str] = []
    first = build_index(dataset, settings, progress=False, contextual="llm", llm=scripted(GOOD, GOOD, GOOD),
                        echo=printed.append)
    report = first.manifest.contextual_report["llm"]
    assert (report["calls"], report["contextualised"], report["from_cache"]) == (3, 3, 0)
    assert "3 LLM call(s)" in printed[0]
    second = build_index(dataset, settings, progress=False, contextual="llm", force=True, llm=scripted(),
                         echo=printed.append)
    report = second.manifest.contextual_report["llm"]
    assert (report["calls"], report["from_cache"], report["contextualised"]) == (0, 3, 3)
    assert "all 3 served from the cache" in printed[-1]
    assert second.embedded == 0  # same contexts, same texts: every embedding reused
    hit = build_retriever("bm25", settings, dataset, contextual="llm", top_k=3).retrieve("BCY 2026 income chart")
    assert all(r.node.metadata["chunk_context"] == GOOD for r in hit)


def test_unbuilt_variant_and_kendra_say_what_to_do(lab):
    settings, dataset = lab
    build_index(dataset, settings, progress=False)
    with pytest.raises(IndexNotReadyError, match="--contextual both"):
        CorpusIndex.open(dataset, settings, "both")
    with pytest.raises(ConfigError, match="Kendra"):
        build_retriever("kendra", settings, None, contextual="annotations")
    with pytest.raises(ConfigError, match="Unknown contextual variant"):
        CorpusIndex.open(dataset, settings, "llmx")


@pytest.mark.parametrize("in_prompt", [False, True])
def test_context_in_the_answer_prompt_is_switchable(lab, in_prompt):
    from rag_lab.answer.prompt import format_chunk

    settings, dataset = lab
    build_index(dataset, settings, progress=False, contextual="annotations", context_in_prompt=in_prompt,
                echo=lambda _: None)
    for mode in ("dense", "bm25"):
        [result] = build_retriever(mode, settings, dataset, contextual="annotations", top_k=1).retrieve("quokka heron")
        block = format_chunk(1, result)
        assert block.startswith("[Doc 1: alpha.txt]") and block.endswith(FILES["alpha.txt"])
        assert ("Context: Field diary of the quokka survey team" in block) is in_prompt, mode
