"""The natural-answer validation set: answers the lab's generators wrote, their labels by reading
(docs/judge-labels.md), and how a judge's scores agree with those labels.

A judged metric is compared with one label: faithfulness with ``faithful`` (a refusal's null label
leaves it out: it has no claims), factual correctness with ``correct``. Per metric and design:
ROC AUC over every scored answer, balanced accuracy of the 0.5 cut, and pairwise accuracy over the
(right, wrong) pairs of one question (the right answer scores strictly higher; a tie counts half).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.judge_labels.agreement import roc_auc

SET_DIR = Path("datasets/texas_childcare_full/natural_answers")
LABEL_OF = {"faithfulness": "faithful", "factual_correctness": "correct"}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_labelled(set_dir: Path, half: str, labelled_only: bool = False) -> list[dict[str, Any]]:
    """The answers of ``half`` ("tune", "test" or "all"), each with its label fields; an error naming
    the unlabelled answers when any is (labels come before any judge score), or, ``labelled_only``,
    only those labelled so far (while the set is still being labelled)."""
    answers = read_jsonl(set_dir / "answers.jsonl")
    labels_file = set_dir / "labels.jsonl"
    labels = {row["id"]: row for row in read_jsonl(labels_file)} if labels_file.is_file() else {}
    chosen = [a for a in answers if half == "all" or a["split"] == half]
    missing = [a["id"] for a in chosen if a["id"] not in labels]
    if labelled_only:
        chosen = [a for a in chosen if a["id"] in labels]
    elif missing:
        raise SystemExit(f"{len(missing)} answer(s) of {half!r} have no label in {labels_file} "
                         f"(first: {missing[0]}): label every answer before judging it (docs/judge-labels.md)")
    return [a | {"label": labels[a["id"]]} for a in chosen]


@dataclass(frozen=True)
class LabelAgreement:
    judgments: int
    failures: int  # no score where the label applies (an error, not a documented NaN)
    auc: float | None
    balanced_accuracy: float | None
    pairs: int
    pairwise_accuracy: float | None
    refusals_scored_zero: int  # answers the label finds no claim in (refusals) given 0 instead of "not applicable"


def _usable(score: Any) -> bool:
    return score is not None and not (isinstance(score, float) and math.isnan(score))


def label_agreement(rows: list[dict[str, Any]], label_field: str) -> LabelAgreement:
    """``rows``: {"question_id", "score", "error", "label": {field: 1 | 0 | None, "refusal": bool}}."""
    applicable = [r for r in rows if r["label"].get(label_field) is not None]
    scored = [r for r in applicable if _usable(r["score"])]
    positives = [r["score"] for r in scored if r["label"][label_field] == 1]
    negatives = [r["score"] for r in scored if r["label"][label_field] == 0]
    balanced = None
    if positives and negatives:
        balanced = (sum(s >= 0.5 for s in positives) / len(positives) + sum(s < 0.5 for s in negatives) / len(negatives)) / 2
    by_question: dict[str, list[dict[str, Any]]] = {}
    for r in scored:
        by_question.setdefault(r["question_id"], []).append(r)
    pairs = won = 0.0
    for group in by_question.values():
        for right in (r for r in group if r["label"][label_field] == 1):
            for wrong in (r for r in group if r["label"][label_field] == 0):
                pairs += 1
                won += (right["score"] > wrong["score"]) + 0.5 * (right["score"] == wrong["score"])
    refusals_zero = sum(1 for r in rows if r["label"].get(label_field) is None and r["score"] == 0.0)
    return LabelAgreement(judgments=len(rows), failures=len(applicable) - len(scored),
                          auc=roc_auc(positives, negatives), balanced_accuracy=balanced, pairs=int(pairs),
                          pairwise_accuracy=won / pairs if pairs else None, refusals_scored_zero=refusals_zero)


def verdicts_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    """Every statement verdict a judgment's transcript records (rule, p, statement, evidence), in order."""
    return [verdict for reply in row.get("replies") or [] if reply.get("output") == "ProbabilityVerdicts"
            for verdict in reply["reply"]["verdicts"]]


def decided_by(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many statement verdicts each rule (or the model) decided, from the judges' transcripts."""
    counts: dict[str, int] = {}
    for r in rows:
        for verdict in verdicts_of(r):
            counts[verdict["rule"]] = counts.get(verdict["rule"], 0) + 1
    return counts


def direction_means(row: dict[str, Any], reference: str) -> tuple[float | None, float | None]:
    """Factual correctness's two directions of one judgment, from its recorded verdicts: the mean
    P(yes) of the answer's claims against the reference (precision) and of the reference's claims
    against the answer (the share of the reference the answer states)."""
    from rag_lab.evaluate.judge.probability import premise_sha

    entries = [r["reply"] for r in row.get("replies") or [] if r.get("output") == "ProbabilityVerdicts"]
    against_reference = premise_sha(reference)
    answer_side = [v["p"] for e in entries if e["premise_sha"] == against_reference for v in e["verdicts"]]
    reference_side = [v["p"] for e in entries if e["premise_sha"] != against_reference for v in e["verdicts"]]
    mean = (lambda ps: sum(ps) / len(ps) if ps else None)
    return mean(answer_side), mean(reference_side)


def auc_interval(rows: list[dict[str, Any]], label_field: str, resamples: int = 1000,
                 seed: int = 0) -> tuple[float, float] | None:
    """95 % percentile interval of the ROC AUC, resampling whole questions (a question's answers share
    its contexts and reference: they are not independent)."""
    import random

    scored = [r for r in rows if r["label"].get(label_field) is not None and _usable(r["score"])]
    by_question: dict[str, list[dict[str, Any]]] = {}
    for r in scored:
        by_question.setdefault(r["question_id"], []).append(r)
    questions = sorted(by_question)
    if not questions:
        return None
    draw = random.Random(seed)
    found = []
    for _ in range(resamples):
        sample = [r for q in (draw.choice(questions) for _ in questions) for r in by_question[q]]
        auc = roc_auc([r["score"] for r in sample if r["label"][label_field] == 1],
                      [r["score"] for r in sample if r["label"][label_field] == 0])
        if auc is not None:
            found.append(auc)
    if not found:
        return None
    found.sort()
    return found[int(0.025 * len(found))], found[min(len(found) - 1, int(0.975 * len(found)))]
