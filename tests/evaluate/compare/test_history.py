"""`rag-lab runs [DIR]`: the runs of a folder, newest first, each against the previous run of its dataset."""

from __future__ import annotations

import json

from rag_lab.evaluate.compare.history import list_runs
from tests.evaluate.compare.builders import manifest, scores, write_run


def _history(tmp_path):
    write_run(tmp_path / "first", scores(4, lambda i: 0.5), manifest(**{"created_at": "2026-12-01T10:00:00+00:00"}))
    write_run(tmp_path / "second", scores(4, lambda i: 0.7),
              manifest(**{"created_at": "2026-12-02T10:00:00+00:00", "models.embedding": "local:bge"}))
    write_run(tmp_path / "other", scores(3, lambda i: 0.9),
              manifest(**{"created_at": "2026-12-03T10:00:00+00:00", "dataset.name": "scifact"}))
    write_run(tmp_path / "third", scores(4, lambda i: 0.6),
              manifest(**{"created_at": "2026-12-04T10:00:00+00:00", "models.embedding": "local:bge",
                          "question_set": {"origin": "synthetic"}}))
    (tmp_path / "not-a-run").mkdir()
    return tmp_path


def test_newest_first_each_against_the_previous_run_of_its_dataset(tmp_path):
    rows = list_runs(_history(tmp_path))
    assert [r.path.rsplit("/", 1)[1] for r in rows] == ["third", "other", "second", "first"]
    third, other, second, first = rows
    assert third.differs == ["question set"]  # against "second", not the scifact run between them
    assert second.differs == ["embedding model"] and first.differs is None and other.differs is None
    assert third.question_set == "synthetic, split all, 4 questions"
    assert second.n == 4 and second.headline["ndcg@10"] == {"bm25": 0.7, "hybrid": 0.7}


def test_a_run_being_written_and_a_damaged_one_are_listed_as_such(tmp_path):
    from rag_lab.evaluate.store.run_lock import run_lock

    folder = _history(tmp_path)
    (folder / "first" / "bm25" / "samples.jsonl").write_text("{broken\n")
    with run_lock(folder / "second"):
        rows = {r.path.rsplit("/", 1)[1]: r for r in list_runs(folder)}
    assert rows["second"].state.startswith("being written (PID ")
    assert "first/bm25/samples.jsonl: line 1 is not JSON" in rows["first"].state


def test_the_cli_table_and_json(lab_cli, tmp_path):
    folder = _history(tmp_path)
    code, out, _ = lab_cli("runs", str(folder))
    assert code == 0 and out.index("third") < out.index("first")
    assert "differs from the previous in: embedding model" in out and "first run of its dataset" in out
    code, out, _ = lab_cli("runs", str(folder), "--json")
    data = json.loads(out)
    assert [row["dataset"] for row in data] == ["texas_childcare", "scifact", "texas_childcare", "texas_childcare"]
    code, _, err = lab_cli("runs", str(folder / "missing"))
    assert code == 2 and "is not a folder" in err
