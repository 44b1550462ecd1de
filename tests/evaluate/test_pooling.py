"""The pooled view — unjudged top-10 documents that state every key fact of the
reference answer, listed for review and never counted as relevant."""

from __future__ import annotations

import json

import pytest

from rag_lab.evaluate.retrieval.pooling import pool_unjudged
from tests.builders import write_folder_dataset

TEXTS = {"cats.txt": "A house cat sleeps 16 hours a day; food costs $40 a month.",
         "cats-2024.txt": "2024 edition: a house cat sleeps 16 hours a day and food costs $40 a month.",
         "cats-2023.txt": "2023 edition: a house cat sleeps 15 hours a day and food costs $40 a month.",
         "dogs.txt": "A puppy needs 3 walks a day."}
QUESTION = "How long does a house cat sleep and what does its food cost?"
REFERENCE = "16 hours a day, and $40 a month."


def test_pool_lists_unjudged_documents_that_state_every_key_fact():
    runs = {"bm25": {"q": {"cats-2024.txt": 3.0, "cats.txt": 2.0, "cats-2023.txt": 1.5, "dogs.txt": 1.0}}}
    qrels = {"q": {"cats.txt": 1}}
    pooled = pool_unjudged(runs, qrels, {"q": (QUESTION, REFERENCE)}, TEXTS)
    # cats.txt is judged (not listed); cats-2023 states $40 but not 16 (listed only with every fact); dogs none
    assert pooled == [{"qid": "q", "mode": "bm25", "rank": 1, "document": "cats-2024.txt", "judged": ["cats.txt"],
                       "question": QUESTION, "reference": REFERENCE, "key_facts": ["16", "dollar_40"]}]
    assert pool_unjudged(runs, qrels, {"q": (QUESTION, REFERENCE)}, TEXTS, k=0) == []  # only the top k


def test_pool_skips_a_reference_without_facts_beyond_the_question():
    runs = {"bm25": {"q": {"cats-2024.txt": 3.0}}}
    echo = ("Does a house cat sleep 16 hours a day for $40?", "Yes, 16 hours; $40.")
    assert pool_unjudged(runs, {"q": {"cats.txt": 1}}, {"q": echo}, TEXTS) == []


@pytest.fixture(scope="module")
def twins(tmp_path_factory, lab_settings):
    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import build_index

    root = write_folder_dataset(tmp_path_factory.mktemp("pool") / "twins", TEXTS,
                                [{"id": "q", "question": QUESTION, "reference_answer": REFERENCE, "source_file": "cats.txt"}])
    build_index(resolve_dataset(root), lab_settings, progress=False)
    return root


def test_ir_cli_writes_the_pool_and_the_report_shows_it(twins, lab_cli, tmp_path):
    from rag_lab.report.html import build_report

    code, out, err = lab_cli("ir", str(twins), "--modes", "bm25", "--pool", str(tmp_path / "pool.jsonl"),
                             "--json", str(tmp_path / "ir.json"), "--out", str(tmp_path / "run"))
    assert code == 0, err
    lines = [json.loads(line) for line in (tmp_path / "pool.jsonl").read_text().splitlines()]
    assert [(e["qid"], e["document"], e["key_facts"]) for e in lines] == [("q", "cats-2024.txt", ["16", "dollar_40"])]
    assert "1 unjudged top-10 document(s)" in out and "not counted as relevant" in out
    data = json.loads((tmp_path / "ir.json").read_text())
    # never counted: one relevant document (cats.txt) judged, recall@100 is 1 and the pool changes no metric
    assert data["per_query"]["bm25"]["recall@100"] == {"q": 1.0}
    assert data["pooled"] == lines
    page = build_report(tmp_path / "run")
    assert 'id="pooled--unjudged-documents-stating-the-answer"' in page and "cats-2024.txt" in page


def test_pool_on_a_dataset_without_references_is_a_clear_error(lab_settings):
    from rag_lab.datasets import resolve_dataset
    from rag_lab.errors import DatasetError
    from rag_lab.evaluate.retrieval.ir import evaluate_modes

    with pytest.raises(DatasetError, match="--pool needs reference answers"):
        evaluate_modes(resolve_dataset("scifact", lab_settings.datasets_dir), lab_settings, ["bm25"], pool=True)
