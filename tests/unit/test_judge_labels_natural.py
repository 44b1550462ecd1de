"""The natural-answer set's agreement measures (exact values on a hand-made example), its label
checks, and the judge benchmark's rules-alone design run through the real scoring path."""

from __future__ import annotations

import json

import pytest

from benchmarks.judge_labels.natural import label_agreement, load_labelled
from benchmarks.label_natural_answers import check


def row(question, score, faithful, refusal=False):
    return {"question_id": question, "score": score, "error": None,
            "label": {"faithful": faithful, "correct": faithful or 0, "refusal": refusal}}


def test_auc_balanced_accuracy_and_pairs_by_formula():
    rows = [row("a", 0.9, 1), row("a", 0.6, 0), row("a", 0.9, 0),   # a: right 0.9 vs wrong 0.6 (won), 0.9 (tie)
            row("b", 0.4, 1), row("b", 0.1, 0),                     # b: won
            row("c", None, 1),                                      # c: a failure
            row("d", 0.0, None, refusal=True)]                      # a refusal scored 0: not applicable, counted
    a = label_agreement(rows, "faithful")
    # positives 0.9, 0.4; negatives 0.6, 0.9, 0.1: wins 0.9>0.6, 0.9=0.9 (½), 0.9>0.1, 0.4>0.1 → 3.5 / 6
    assert a.auc == pytest.approx(3.5 / 6)
    # 0.5 cut: positives 1 of 2 at ≥ 0.5; negatives 1 of 3 below 0.5 → (0.5 + 1/3) / 2
    assert a.balanced_accuracy == pytest.approx((0.5 + 1 / 3) / 2)
    assert (a.pairs, a.pairwise_accuracy) == (3, pytest.approx(2.5 / 3))
    assert (a.judgments, a.failures, a.refusals_scored_zero) == (7, 1, 1)


def test_label_checks_name_each_problem():
    ids = {"q::g"}
    good = {"id": "q::g", "faithful": 1, "correct": 0, "partial": True, "refusal": False, "note": "misses $4,106"}
    assert check([good], ids) == []
    problems = check([good, good | {"id": "x::g"}, good | {"faithful": None}, good | {"refusal": True}], ids)
    assert any("labelled twice" in p for p in problems)
    assert any("no such answer id" in p for p in problems)
    assert any("null only for a refusal" in p for p in problems)
    assert any("a refusal has no claims" in p for p in problems)


def test_judging_waits_for_every_label(tmp_path):
    answer = {"id": "q::g", "question_id": "q", "split": "tune", "generator": "g", "question": "?", "reference": "r",
              "answer": "a", "contexts": []}
    (tmp_path / "answers.jsonl").write_text(json.dumps(answer) + "\n")
    with pytest.raises(SystemExit, match="label every answer before judging it"):
        load_labelled(tmp_path, "tune")
    (tmp_path / "labels.jsonl").write_text(json.dumps({"id": "q::g", "faithful": 1, "correct": 1}) + "\n")
    assert load_labelled(tmp_path, "tune")[0]["label"]["correct"] == 1
    assert load_labelled(tmp_path, "test") == []


def test_rules_alone_scores_what_the_rules_decide(tmp_path, monkeypatch):
    """The benchmark's ``rules`` design through ``Scorer.score``: the other column's figure is stated by
    the context, so the rules leave it to the (constant) model; a figure no context states is 0; a
    refusal is not applicable, never 0."""
    from benchmarks import judge_natural

    context = "Income limits, BCY 2026\nFamily Size | Bi-weekly | Monthly\n5 | $4,106 | $8,896\n"
    answers = {"right": "A family of 5 may earn up to $4,106 bi-weekly.",
               "other-column": "A family of 5 may earn up to $8,896 bi-weekly.",
               "invented": "A family of 5 may earn up to $5,000 bi-weekly.",
               "refusal": "I couldn't find information about that."}
    monkeypatch.setenv("RAG_LAB_DATA_DIR", str(tmp_path / "data"))
    from rag_lab.config import get_settings

    scorers = judge_natural.build_scorers("rules", get_settings())
    scores = {}
    for name, text in answers.items():
        answer = {"id": f"q::{name}", "question_id": "q", "generator": name, "answer": text, "question":
                  "What is the bi-weekly limit for a family of 5?", "reference": "$4,106 bi-weekly.",
                  "contexts": [{"text": context}]}
        scores[name] = judge_natural.judge_one(scorers["faithfulness"], answer, "faithfulness", "rules",
                                               judge_natural.design_judge_id("rules", get_settings()))
    assert scores["right"]["score"] == scores["other-column"]["score"] == pytest.approx(0.5)
    assert scores["invented"]["score"] == 0.0
    assert scores["invented"]["replies"][0]["reply"]["verdicts"][0]["rule"] == "numbers"
    assert scores["refusal"]["score"] is None and scores["refusal"]["error"].startswith("NotApplicable")
    # each record names its judge: the model's stand-in and every rule's version
    assert scores["right"]["judge"].endswith("+p=0.5") and "-cells" in scores["right"]["judge"]


def test_labelled_only_judges_what_is_labelled_so_far(tmp_path):
    rows = [{"id": f"q::{g}", "question_id": "q", "split": "tune", "generator": g, "question": "?", "reference": "r",
             "answer": "a", "contexts": []} for g in ("a", "b")]
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "labels.jsonl").write_text(json.dumps({"id": "q::a", "faithful": 1, "correct": 1}) + "\n")
    with pytest.raises(SystemExit, match="1 answer"):
        load_labelled(tmp_path, "tune")
    assert [a["id"] for a in load_labelled(tmp_path, "tune", labelled_only=True)] == ["q::a"]


def test_factual_correctness_directions_are_read_from_the_recorded_verdicts():
    """The answer's claims were verified against the reference (premise = the reference), the
    reference's against the answer: each direction's mean P(yes), told apart by the premise's hash."""
    from benchmarks.judge_labels.natural import direction_means
    from rag_lab.evaluate.judge.probability import premise_sha

    reference, answer = "A family of 5 may earn $4,106 bi-weekly.", "$4,106 [Doc 1]"
    row = {"replies": [
        {"output": "ProbabilityVerdicts", "reply": {"premise_sha": premise_sha(reference),
                                                     "verdicts": [{"p": 1.0}, {"p": 0.5}]}},
        {"output": "ProbabilityVerdicts", "reply": {"premise_sha": premise_sha(answer), "verdicts": [{"p": 0.2}]}},
        {"output": "StatementGeneratorOutput", "reply": {}}]}
    assert direction_means(row, reference) == (0.75, 0.2)
    assert direction_means({"replies": []}, reference) == (None, None)


def test_the_auc_interval_resamples_whole_questions():
    from benchmarks.judge_labels.natural import auc_interval

    def row(question, label, score):
        return {"question_id": question, "score": score, "label": {"faithful": label}}

    separated = [row(f"q{i}", 1, 0.9) for i in range(5)] + [row(f"q{i}", 0, 0.1) for i in range(5)]
    assert auc_interval(separated, "faithful") == (1.0, 1.0)
    # one question's answers always travel together: a question whose wrong answer outscores its right one
    mixed = separated + [row("q9", 1, 0.2), row("q9", 0, 0.95)]
    low, high = auc_interval(mixed, "faithful")
    assert low < high <= 1.0 and low < 0.9
    assert auc_interval([], "faithful") is None


def test_the_likelihood_benchmark_replaces_only_the_models_verdicts_by_formula():
    """benchmarks/judge_likelihood.py: pmi = mean log-prob with the evidence − without; the verdict
    sigmoid(k·pmi + b) replaces P(yes) of a statement the model decided, the rules' verdicts stay."""
    import math

    from benchmarks.judge_likelihood import answer_score, signal

    judgment = {"id": "a", "replies": [{"output": "ProbabilityVerdicts", "reply": {"verdicts": [
        {"statement": "copied line", "rule": "verbatim", "p": 1.0},
        {"statement": "own sentence", "rule": "model", "p": 0.6}]}}]}
    record = {"with": [-0.5, -1.5], "alone": [-2.0, -4.0]}  # means -1.0 and -3.0
    assert signal(record, "pmi") == pytest.approx(2.0) and signal(record, "with") == pytest.approx(-1.0)
    likelihoods = {("a", "own sentence"): record}
    assert answer_score(judgment, likelihoods, None) == pytest.approx(0.6)
    assert answer_score(judgment, likelihoods, ("pmi", 1.0, -1.0, 1.0)) == pytest.approx(1 / (1 + math.exp(-1.0)))
    # half the likelihood's log-odds, half P(yes)'s
    mixed = 0.5 * (1.0 * 2.0 - 1.0) + 0.5 * math.log(0.6 / 0.4)
    assert answer_score(judgment, likelihoods, ("pmi", 1.0, -1.0, 0.5)) == pytest.approx(1 / (1 + math.exp(-mixed)))
    assert answer_score(judgment, {}, ("pmi", 1.0, 0.0, 1.0)) is None  # a statement not measured


def test_the_nli_candidate_benchmark_reads_each_line_and_pair_and_keeps_the_rules_verdicts():
    """benchmarks/judge_nli_candidate.py: a statement's premise pieces are its evidence lines and each two
    adjacent lines; in the ``judge`` rows only the model's statements take the classifier's verdict."""
    from benchmarks.judge_nli_candidate import premise_pieces, report

    assert premise_pieces("a\n\nb\nc") == ["a", "b", "c", "a b", "b c"]
    assert premise_pieces("") == [""]

    class Classifier:  # a fixed P(supported) per statement stands in for the ONNX model
        p = {"copied": 0.1, "right": 0.9, "wrong": 0.2}

        def verdict(self, statement: str, evidence: str) -> float:
            return self.p[statement]

    def judgment(answer_id: str, own: str, llm_p: float) -> dict:
        return {"id": answer_id, "replies": [{"output": "ProbabilityVerdicts", "reply": {"verdicts": [
            {"statement": "copied", "evidence": "x", "rule": "verbatim", "p": 1.0},
            {"statement": own, "evidence": "x", "rule": "model", "p": llm_p}]}}]}

    # the 1.5B ranks the wrong answer first; the classifier ranks them right
    judgments = {"good": judgment("good", "right", 0.4), "bad": judgment("bad", "wrong", 0.7)}
    answers = {"good": {"label": {"faithful": 1}}, "bad": {"label": {"faithful": 0}}}
    rows = {line.split(" | ")[0].strip("| ") + " / " + line.split(" | ")[1]: line.split(" | ")[3]
            for line in report(judgments, answers, Classifier()).splitlines()[2:]}
    assert rows["rules, then the classifier / product"] == "1.000"  # 1.0 × 0.9 against 1.0 × 0.2
    assert rows["rules, then the 1.5B's P(yes) (shipped) / product"] == "0.000"
    # alone, the copied line's 0.1 counts too: min 0.1 for both answers, a tie
    assert rows["the classifier alone / min"] == "0.500"
