"""Each dataset's rest split counts the tune runs that looked at it, per dev split."""

from __future__ import annotations

import json

from rag_lab.evaluate.tune.rest_looks import record_rest_look, rest_looks


def test_every_look_is_counted_per_dev_split(tmp_path):
    dev = frozenset({"q1", "q2"})
    assert rest_looks(tmp_path, "scifact", dev) == 0
    assert record_rest_look(tmp_path, "scifact", dev, tmp_path / "run-a") == 1
    assert record_rest_look(tmp_path, "scifact", frozenset({"q2", "q1"}), tmp_path / "run-b") == 2  # same split
    assert record_rest_look(tmp_path, "scifact", frozenset({"q3"}), tmp_path / "run-c") == 1  # another rest split
    assert record_rest_look(tmp_path, "texas", dev, tmp_path / "run-d") == 1  # another dataset
    assert rest_looks(tmp_path, "scifact", dev) == 2
    stored = json.loads((tmp_path / "rest_looks" / "scifact.json").read_text())
    assert sorted(entry["looks"] for entry in stored.values()) == [1, 2]
    assert [run["run_dir"] for entry in stored.values() for run in entry["runs"]][:2] == [str(tmp_path / "run-a"),
                                                                                         str(tmp_path / "run-b")]
