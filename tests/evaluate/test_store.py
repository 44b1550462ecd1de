"""The samples log: appended lines survive, a torn last line is dropped and cut, resume keeps."""

from __future__ import annotations

import json

from rag_lab.evaluate.store.run_folder import SampleLog, read_samples


def test_append_resume_and_torn_line(tmp_path):
    log = SampleLog(tmp_path / "bm25", resume=False)
    log.append({"id": "q1", "scores": {"rouge_l": 0.5}})
    log.append({"id": "q2", "scores": {"rouge_l": float("nan")}})  # NaN is written as null
    path = tmp_path / "bm25" / "samples.jsonl"
    with path.open("a", encoding="utf-8") as handle:  # a process killed mid-write
        handle.write('{"id": "q3", "sco')
    assert [r["id"] for r in read_samples(path)] == ["q1", "q2"]

    resumed = SampleLog(tmp_path / "bm25", resume=True)
    assert set(resumed.done) == {"q1", "q2"}
    resumed.append({"id": "q3", "scores": {}})
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["q1", "q2", "q3"]
    assert json.loads(lines[1])["scores"]["rouge_l"] is None

    fresh = SampleLog(tmp_path / "bm25", resume=False)  # without --resume a run starts over
    assert fresh.done == {} and not path.exists()
