"""`rag-lab eval` marks the samples of the dataset's declared dev split: the
runner records ``dev_split`` per sample and the tables count them per mode."""

from __future__ import annotations

from rag_lab.evaluate.store.frames import modes_frame


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
    from rag_lab.cli.eval import render_eval_table

    assert any(line.split()[:2] == ["dev_split", "1"] for line in render_eval_table(run).splitlines())
    held_out = run_evaluation(str(corpus), lab_settings, ["bm25"], tmp_path / "rest", rerank=False, progress=False,
                              split="rest", llm=ScriptedLLM(script=quoting_answer))
    assert held_out.modes.loc[0, "dev_split"] == 0
    assert not any(line.startswith("dev_split") for line in render_eval_table(held_out).splitlines())  # no 0 row


def _two_question_corpus(lab_settings, tmp_path):
    import json
    import shutil

    corpus = tmp_path / "mine"
    (corpus / "docs").mkdir(parents=True)
    pdf = "bcy-26-psoc-chart-twc.pdf"
    shutil.copy(lab_settings.datasets_dir / "texas_childcare" / "pdfs" / pdf, corpus / "docs" / pdf)
    (corpus / "qa.jsonl").write_text("".join(json.dumps({"id": i, "question": q, "source_file": pdf}) + "\n" for i, q in
                                             [("tuned", "What is the parent share of cost for a family of 3?"),
                                              ("held-out", "What does BCY 26 mean?"),
                                              ("held-out-2", "What is the share of cost for a family of 4?")]),
                                     encoding="utf-8")
    (corpus / "dev_split.txt").write_text("# tuning may look at these\ntuned\n", encoding="utf-8")
    return corpus


def test_questions_picks_the_split_before_the_limit(lab_settings, tmp_path):
    import pytest

    from rag_lab.datasets import resolve_dataset
    from rag_lab.errors import DatasetError
    from rag_lab.evaluate.run.runner import questions

    dataset = resolve_dataset(str(_two_question_corpus(lab_settings, tmp_path)))
    assert [p.id for p, _ in questions(dataset, split="dev")] == ["tuned"]
    assert [p.id for p, _ in questions(dataset, split="rest")] == ["held-out", "held-out-2"]
    assert len(questions(dataset, split="all")) == 3
    assert [p.id for p, _ in questions(dataset, limit=1, split="dev")] == ["tuned"]  # the limit samples the split
    (dataset.root / "dev_split.txt").unlink()
    with pytest.raises(DatasetError, match="declares no dev split"):
        questions(resolve_dataset(str(dataset.root)), split="dev")


def test_eval_split_runs_only_that_split_and_every_table_says_so(lab_settings, tmp_path):
    import json

    from rag_lab.cli.eval import render_eval_table
    from rag_lab.evaluate import run_evaluation
    from rag_lab.evaluate.store.frames import load_run
    from rag_lab.report.html import build_report
    from tests.answer.conftest import ScriptedLLM
    from tests.evaluate.conftest import quoting_answer

    corpus = _two_question_corpus(lab_settings, tmp_path)
    llm = ScriptedLLM(script=quoting_answer)
    out = tmp_path / "run"
    run = run_evaluation(str(corpus), lab_settings, ["bm25"], out, rerank=False, progress=False, llm=llm, split="rest")
    assert sorted(r["id"] for r in run.records["bm25"]) == ["held-out", "held-out-2"]
    assert json.loads((out / "manifest.json").read_text())["config"]["split"] == "rest"
    assert render_eval_table(run).splitlines()[0] == "means over the rest only (the dev split left out: held-out questions)"
    report = build_report(out)
    assert "split: rest" in report and "Questions: the rest only" in report
    # resuming with the dev split adds its questions: the folder now averages all of them
    run = run_evaluation(str(corpus), lab_settings, ["bm25"], out, rerank=False, progress=False, llm=llm, split="dev",
                         resume=True)
    assert sorted(r["id"] for r in run.records["bm25"]) == ["held-out", "held-out-2", "tuned"]
    assert load_run(out).manifest["config"]["split"] == "all"
    assert render_eval_table(run).splitlines()[0] == "means over all questions"
