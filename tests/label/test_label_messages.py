"""What `rag-lab label` says of runs it cannot calibrate, and agreement where one class is all there is."""

from __future__ import annotations

import json
import math

from rag_lab.cli.main import main
from rag_lab.evaluate.calibration import NO_JUDGED_METRIC, NO_PERSON_VERDICT, calibrated_judged
from rag_lab.evaluate.statistics.agreement import cohen_kappa
from tests.label.conftest import write_toy_run


def _without_judge(run):
    for mode in ("bm25", "hybrid"):
        path = run / mode / "samples.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:
            record["scores"] = {"rouge_l": 0.5}
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return run


def test_plan_on_a_run_without_a_judge_is_one_line(tmp_path, capsys):
    run = _without_judge(write_toy_run(tmp_path / "run"))
    assert main(["label", str(run), "--plan"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [f"{run}: {NO_JUDGED_METRIC}: nothing to plan"]


def test_plan_before_any_label_says_when_the_run_has_fewer_answers(tmp_path, capsys):
    run = write_toy_run(tmp_path / "run", questions=3)
    assert main(["label", str(run), "--plan"]) == 0
    out = capsys.readouterr().out
    assert "more than the run's 3 answers a mode: label them all" in out


def test_a_metric_no_person_labels_is_not_sent_to_the_labelling_page(tmp_path):
    run = write_toy_run(tmp_path / "run")
    for mode in ("bm25", "hybrid"):
        path = run / mode / "samples.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:
            record["scores"]["response_relevancy"] = 0.7
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    verdict = calibrated_judged(run)["response_relevancy"].verdict()
    assert verdict == f"response_relevancy: {NO_PERSON_VERDICT}"
    assert "rag-lab label" not in verdict


def test_kappa_is_undefined_when_both_raters_use_one_class():
    assert math.isnan(cohen_kappa([1], [1]))
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert cohen_kappa([1, 0], [1, 0]) == 1.0


def test_broken_pipe_exits_with_the_shells_code_not_a_gates(monkeypatch, tmp_path, capsys):
    run = write_toy_run(tmp_path / "run")

    def closed_reader(*args, **kwargs):
        raise BrokenPipeError

    monkeypatch.setattr("rag_lab.report.label.plan.plan_lines", lambda *a, **k: closed_reader())
    assert main(["label", str(run), "--plan"]) == 141
