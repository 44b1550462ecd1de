"""benchmarks/offline_models.py: questions outside the dev split (or only
in it with --dev), answers keyed by everything that shapes them, a subset file rebuilt when its inputs
change; and the local rerank prompts are part of the answer cache's prompt version."""

from __future__ import annotations

import json

import pytest

from tests.builders import ROOT, load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("offline_models")


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the bench finds datasets/ from the repository root


def test_bench_questions_are_outside_the_dev_split_and_dev_questions_inside(bench, at_root):
    from rag_lab.splits import read_dev_split

    dev = read_dev_split(ROOT / "datasets" / "texas_childcare_full")
    bench_items = bench.build_subset(500, 3, 0, False, [])
    dev_items = bench.build_subset(500, 3, 0, True, [])
    assert bench_items and dev_items
    assert not {i["id"] for i in bench_items} & dev  # before: drawn from every question, dev ones included
    assert {i["id"] for i in dev_items} <= dev
    # a smaller n is the larger sample's prefix
    assert [i["id"] for i in bench.build_subset(5, 3, 0, False, [])] == [i["id"] for i in bench_items[:5]]


def test_answer_key_changes_with_every_input(bench):
    item = {"id": "q1", "question": "What is the bi-weekly limit for a family of 5?"}
    chunks = [{"text": "Family Size 5 | Bi-Weekly: $4,106", "filename": "bcy.pdf", "page": 1}]
    default = "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M+compress"
    settings = bench.candidate_settings(default)
    key = bench.answer_key(default, item, chunks, settings)
    assert key == bench.answer_key(default, dict(item), [dict(c) for c in chunks], bench.candidate_settings(default))
    variants = [
        bench.answer_key(default, item | {"question": "What is the weekly limit?"}, chunks, settings),
        bench.answer_key(default, item, [chunks[0] | {"text": "Family Size 5 | Bi-Weekly: $4,107"}], settings),
        bench.answer_key(default, item, [chunks[0] | {"page": 2}], settings),
        bench.answer_key("SmolLM2-135M-Instruct.Q4_1", item, chunks, settings),
        bench.answer_key(default + "+prompt66f75d1", item, chunks, settings),
        bench.answer_key(default, item, chunks, settings.model_copy(update={"llm_max_tokens": 64})),
        bench.answer_key(default, item, chunks, settings.model_copy(update={"llm_temperature": 0.7})),
        bench.answer_key(default, item, chunks, bench.candidate_settings("Qwen2.5-Coder-1.5B-Instruct-Q4_K_M")),
    ]
    assert len({key, *variants}) == len(variants) + 1
    # the same question id with another text is another answer (before: keyed by (task, id) only); the
    # same text under another id is the same answer
    assert variants[0] != key
    assert bench.answer_key(default, item | {"id": "q2"}, chunks, settings) == key


def test_records_without_a_key_are_not_reused(bench, tmp_path):
    cache = tmp_path / "m@oracle.jsonl"
    cache.write_text(json.dumps({"task": "answer", "id": "q1", "answer": "old"}) + "\n"
                     + json.dumps({"task": "answer", "key": "k", "id": "q1", "answer": "new"}) + "\n{cut")
    assert bench._done(cache) == {("answer", "k"): {"task": "answer", "key": "k", "id": "q1", "answer": "new"}}


def test_the_subset_file_follows_its_inputs_and_fresh_rebuilds_it(bench, tmp_path, monkeypatch):
    inputs = {"revision": "2", "n": 12, "chunks": 3, "seed": 0, "dev": False, "qa": "a", "dev_split": "b",
              "pdfs": {"x.pdf": "c"}, "chunk_words": 500, "tokenizer": 2, "contexts": ["oracle"]}
    path = bench.subset_path(tmp_path, inputs)
    assert path != bench.subset_path(tmp_path, inputs | {"qa": "changed"})
    assert path != bench.subset_path(tmp_path, inputs | {"dev_split": "changed"})
    assert path != bench.subset_path(tmp_path, inputs | {"pdfs": {"x.pdf": "changed"}})
    assert path != bench.subset_path(tmp_path, inputs | {"dev": True})
    built = []
    monkeypatch.setattr(bench, "subset_inputs", lambda *a: inputs)
    monkeypatch.setattr(bench, "build_subset", lambda n, *a: built.append(n) or [{"id": f"q{i}"} for i in range(n)])

    def load(n: int, fresh: bool) -> list:
        args = type("Args", (), {"n": n, "chunks": 3, "seed": 0, "dev": False, "out": tmp_path, "fresh": fresh,
                                 "table_only": False})
        return bench.load_subset(args, ["oracle"])[1]

    assert len(load(12, False)) == 12 and built == [12]
    assert len(load(12, False)) == 12 and built == [12]  # reused
    assert len(load(12, True)) == 12 and built == [12, 12]  # --fresh rebuilds (before: never rebuilt)


def test_the_local_rerank_prompt_is_part_of_the_prompt_version(monkeypatch):
    import rag_lab.answer.rerank as rerank
    from rag_lab.evaluate.plan.answering import prompt_version

    assert rerank.LISTWISE_PROMPT in rerank.RERANK_PROMPT_VERSION
    before = prompt_version()
    monkeypatch.setattr(rerank, "RERANK_PROMPT_VERSION", rerank.RERANK_PROMPT_VERSION.replace("Rank", "Order"))
    assert prompt_version() != before
