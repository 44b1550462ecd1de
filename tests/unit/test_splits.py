"""The declared dev split: deterministic, a share of every document, the tuned questions kept in."""

from collections import Counter
from pathlib import Path

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.errors import DatasetError
from rag_lab.splits import choose_dev_split, read_dev_split, read_id_file, split_ids, write_dev_split


def _sources(per_doc: dict[str, int]) -> dict[str, str]:
    return {f"{doc}#Q{i}": doc for doc, n in per_doc.items() for i in range(1, n + 1)}


def test_a_third_of_every_document_and_deterministic():
    singles = {f"s{i}.pdf": 1 for i in range(6)}  # documents with one question each (BEIR-like)
    sources = _sources({"a.pdf": 9, "b.pdf": 6, "c.pdf": 2, **singles})
    dev = choose_dev_split(sources, seed=3)
    assert dev == choose_dev_split(sources, seed=3)
    assert dev != choose_dev_split(sources, seed=4)
    per_doc = Counter(sources[i] for i in dev)
    assert {d: per_doc[d] for d in ("a.pdf", "b.pdf", "c.pdf")} == {"a.pdf": 3, "b.pdf": 2, "c.pdf": 1}
    drawn_singles = {d for d in per_doc if d in singles}
    assert len(drawn_singles) == 2  # a third of the six one-question documents, drawn together
    others = {frozenset(d for d in (sources[i] for i in choose_dev_split(sources, seed=seed)) if d in singles)
              for seed in range(10)}
    assert len(others) > 1 and all(len(o) == 2 for o in others)  # which ones is the seed's draw


def test_included_ids_count_towards_their_document():
    sources = _sources({"a.pdf": 9})
    dev = choose_dev_split(sources, include=frozenset({"a.pdf#Q7", "a.pdf#Q8"}))
    assert {"a.pdf#Q7", "a.pdf#Q8"} <= set(dev) and len(dev) == 3
    with pytest.raises(DatasetError, match="does not have"):
        choose_dev_split(sources, include=frozenset({"zzz#Q1"}))


def test_round_trip_keeps_ids_that_contain_a_hash(tmp_path: Path):
    write_dev_split(tmp_path, ["doc-qa#Q2", "doc-qa#Q10"], "a header\nsecond line")
    assert read_dev_split(tmp_path) == {"doc-qa#Q2", "doc-qa#Q10"}
    assert read_id_file(tmp_path / "dev_split.txt") == {"doc-qa#Q2", "doc-qa#Q10"}
    assert split_ids(["x", "doc-qa#Q2", "y"], read_dev_split(tmp_path)) == (["doc-qa#Q2"], ["x", "y"])
    assert read_dev_split(tmp_path / "nothing-here") == frozenset()


def test_the_bundled_dev_split_is_a_third_spread_over_documents_and_holds_the_tuned_questions():
    dataset = resolve_dataset("texas_childcare_full")
    pairs = {p.id: p for p in dataset.load_qa()}
    dev = dataset.dev_split
    assert dev <= set(pairs)
    assert 0.30 <= len(dev) / len(pairs) <= 0.36
    tuned = read_id_file(dataset.root / "tuned_before_split.txt")
    assert tuned and tuned <= dev
    documents_with_two = {p.source_file for p in pairs.values() if sum(q.source_file == p.source_file for q in pairs.values()) >= 2}
    assert documents_with_two <= {pairs[i].source_file for i in dev}
