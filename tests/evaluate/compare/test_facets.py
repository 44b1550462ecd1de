"""What changed between two set-ups, read from the manifests: each lever by its name."""

from __future__ import annotations

import pytest

from rag_lab.evaluate.compare.facets import FACETS, Facet, differences, owner
from tests.evaluate.compare.builders import manifest


@pytest.mark.parametrize(("path", "value", "label"), [
    ("dataset.hash", "def", "dataset content"),
    ("config.split", "dev", "question set"),
    ("settings.chunk_words", 300, "chunking"),
    ("models.embedding", "local:bge-small", "embedding model"),
    ("config.params.contextual", "annotations", "contextual variant"),
    ("config.index_fingerprint", "f2", "index fingerprint"),
    ("config.params.fusion_k", 20, "retrieval configuration"),
    ("config.rerank", True, "retrieval configuration"),
    ("models.llm", "openai:gpt-5-mini", "generator"),
    ("config.prompt_version", "p2", "generator"),
    ("config.judge", "local:qwen+probability-r2", "judge"),
    ("settings.judge_numbers", "llm", "judge"),
    ("settings.answer_style", "brief", "answer style"),
    ("git_commit", "c2", "code commit"),
    ("question_set", {"origin": "synthetic", "model": "qwen"}, "question set"),
])
def test_each_lever_is_named(path, value, label):
    changes = differences(manifest(), manifest(**{path: value}))
    assert [c.label for c in changes] == [label]
    assert changes[0].fields[0][0].startswith(path)
    assert changes[0].judge == (label == "judge")


def test_where_and_when_a_run_was_made_is_not_a_difference():
    assert differences(manifest(), manifest(**{"created_at": "2027-01-01", "settings.data_dir": "/elsewhere",
                                               "dataset.root": "/other/clone"})) == []


def test_an_unnamed_new_field_is_reported_under_its_path_and_one_row_names_it():
    changed = manifest(**{"config.reader_level": "expert"})
    assert [c.label for c in differences(manifest(), changed)] == ["config.reader_level"]
    named = (*FACETS, Facet("reader level", ("config.reader_level",)))
    assert [c.label for c in differences(manifest(), changed, named)] == ["reader level"]


def test_exact_paths_win_over_patterns():
    assert owner("config.params.contextual").label == "contextual variant"
    assert owner("config.params.top_k").label == "retrieval configuration"
    assert owner("settings.judge_evidence").label == "judge"


def test_several_levers_are_listed_in_the_declared_order():
    changes = differences(manifest(), manifest(**{"git_commit": "c2", "models.embedding": "local:bge"}))
    assert [c.label for c in changes] == ["embedding model", "code commit"]
    assert changes[0].text() == "models.embedding: local:minilm → local:bge"


def test_a_section_an_older_manifest_lacks_is_said_unrecorded_not_changed():
    from rag_lab.evaluate.compare.facets import differences
    from tests.evaluate.compare.builders import manifest

    old, new = manifest(), manifest(**{"question_set": {"origin": "human", "count": 44}})
    del old["question_set"]
    labels = [c.label for c in differences(old, new)]
    assert labels == ["question set (not recorded in A)"]
