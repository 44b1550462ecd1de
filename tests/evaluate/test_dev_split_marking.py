"""`rag-lab eval` marks the samples of the dataset's declared dev split (issue 20, point 10): the
runner records ``dev_split`` per sample and the tables count them per mode."""

from __future__ import annotations

from rag_lab.evaluate.frames import modes_frame


def _record(qa_id: str, dev: bool | None) -> dict:
    record = {"id": qa_id, "mode": "bm25", "error": None, "latency": {"total": 1.0}, "usage": {}}
    return record if dev is None else record | {"dev_split": dev}


def test_modes_frame_counts_dev_split_samples():
    frame = modes_frame({"bm25": [_record("a", True), _record("b", False), _record("c", None)]})
    assert frame.loc[0, "samples"] == 3 and frame.loc[0, "dev_split"] == 1


def test_the_runner_marks_dev_split_questions(lab_settings, tmp_path):
    import json
    import shutil

    from rag_lab.evaluate import run_evaluation
    from tests.answer.conftest import ScriptedLLM
    from tests.evaluate.conftest import quoting_answer

    corpus = tmp_path / "mine"
    (corpus / "docs").mkdir(parents=True)
    pdf = "bcy-26-psoc-chart-twc.pdf"
    shutil.copy(lab_settings.datasets_dir / "texas_childcare" / "pdfs" / pdf, corpus / "docs" / pdf)
    (corpus / "qa.jsonl").write_text("".join(json.dumps({"id": i, "question": q, "source_file": pdf}) + "\n" for i, q in
                                             [("tuned", "What is the parent share of cost for a family of 3?"),
                                              ("held-out", "What does BCY 26 mean?")]), encoding="utf-8")
    (corpus / "dev_split.txt").write_text("# tuning may look at these\ntuned\n", encoding="utf-8")
    run = run_evaluation(str(corpus), lab_settings, ["bm25"], tmp_path / "run", rerank=False, progress=False,
                         llm=ScriptedLLM(script=quoting_answer))
    assert {r["id"]: r["dev_split"] for r in run.records["bm25"]} == {"tuned": True, "held-out": False}
    assert run.modes.loc[0, "dev_split"] == 1
