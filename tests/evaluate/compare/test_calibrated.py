"""compare reads a judged metric from the labels' corrected values when both runs hold a person's
labels for it, and from the judge alone (said so) when only one does."""

from __future__ import annotations

import numpy as np

from rag_lab.evaluate.calibration import calibrated_judged
from rag_lab.evaluate.compare import compare_runs
from rag_lab.evaluate.store.labels import Label, append_labels, answer_digest
from tests.evaluate.compare.builders import record, scores, write_run

N = 40


def _judged_run(folder, judge_score, person):
    """A run whose judge scores faithfulness ``judge_score(i)`` and whose labeller says ``person(i)``
    on every other question."""
    values = scores(N, modes=("bm25",), metrics=("faithfulness", "rouge_l"))
    values["bm25"]["faithfulness"] = {f"q{i}": float(judge_score(i)) for i in range(N)}
    run = write_run(folder, values)
    answer = record("q0", "bm25", {})["answer"]
    labels = [Label(f"q{i}", "bm25", "faithful", int(person(i)), "ann", "2026-12-06T00:00:00",
                    answer=answer_digest(answer.replace("q0", f"q{i}"))) for i in range(0, N, 2)]
    append_labels(run, labels)
    return run


def test_both_runs_labelled_compare_corrected_values(tmp_path):
    # The judge says 0.9 everywhere in both runs; people find A faithful on 3 in 4, B on 1 in 4.
    a = _judged_run(tmp_path / "a", lambda i: 0.9, lambda i: (i // 2) % 4 != 0)
    b = _judged_run(tmp_path / "b", lambda i: 0.9, lambda i: (i // 2) % 4 == 0)
    row = compare_runs(a, b, metrics=["faithfulness"]).table.iloc[0]
    assert row["basis"] == "calibrated"
    corrected_a = calibrated_judged(a)["faithfulness"].corrected["bm25"]
    corrected_b = calibrated_judged(b)["faithfulness"].corrected["bm25"]
    assert row["mean_a"] == np.mean(list(corrected_a.values()))
    assert row["mean_b"] == np.mean(list(corrected_b.values()))
    # the judge alone sees no difference; the labels' corrected values see B half as faithful
    assert row["delta"] < -0.3


def test_one_run_labelled_compares_the_judge_alone_and_says_so(tmp_path):
    a = _judged_run(tmp_path / "a", lambda i: 0.9, lambda i: 1)
    values = scores(N, modes=("bm25",), metrics=("faithfulness", "rouge_l"), value=lambda i: 0.9)
    b = write_run(tmp_path / "b", values)
    row = compare_runs(a, b, metrics=["faithfulness"]).table.iloc[0]
    assert row["basis"] == "judge alone: labels in A only"
    assert row["mean_a"] == 0.9 and row["mean_b"] == 0.9 and row["delta"] == 0.0


def test_unjudged_metrics_carry_no_basis(tmp_path):
    a = _judged_run(tmp_path / "a", lambda i: 0.9, lambda i: 1)
    row = compare_runs(a, a, metrics=["rouge_l"]).table.iloc[0]
    assert row["basis"] == ""
