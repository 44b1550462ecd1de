"""Where the judge's judgment comes from, on natural answers: the judge, its rules alone and its model
alone, scored against labels made by reading (docs/judge-labels.md, docs/evaluation.md).

    python benchmarks/judge_natural.py --half tune                       # every design, resumable
    python benchmarks/judge_natural.py --half test --designs judge,rules,model
    python benchmarks/judge_natural.py --half tune --report-only

Designs (``DESIGNS``): ``judge`` — the shipped local judge (rules, then the 1.5B model's P(yes));
``rules`` — the same with the model replaced by a constant P(yes) = 0.5 (what the rules alone
separate); ``model`` — the model with every rule off (``judge_numbers/negation/names/verbatim = off``);
``judge-wholefc`` — the judge with factual correctness's premise the whole other text; ``judge-ev2`` — every
statement's premise its two best passages instead of three; ``judge-contrast``,
``model-contrast`` — P(yes) contrasted with P(yes) of the statement without a premise; ``…-share`` —
faithfulness as the expected share of stated statements (RAGAS's ratio, the mean P) instead of the
probability that every statement is stated (the product, the default).
Every judgment is appended to ``<out>/<half>/judgments.jsonl`` as it finishes with the judge's id (its
rules' and prompts' versions): a rerun skips what is there for the same answer text, design and judge, and
the table reads the judgments of the current judge only. The test half is scored once per design, at the end:
choices look at the tune half only. The answers must all be labelled first (``labels.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.judge_labels.agreement import roc_auc  # noqa: E402
from benchmarks.judge_labels.natural import (LABEL_OF, SET_DIR, auc_interval, decided_by,  # noqa: E402
                                             direction_means, label_agreement, load_labelled)

METRICS = ("faithfulness", "factual_correctness")
RULES_OFF = {"judge_numbers": "off", "judge_negation": "off", "judge_names": "off", "judge_verbatim": "off",
             "judge_cells": "off"}
SHARE = {"judge_faithfulness_score": "share"}
# design → (settings changes, constant P(yes) standing in for the model or None)
DESIGNS: dict[str, tuple[dict[str, Any], float | None]] = {
    "judge": ({}, None),
    "rules": ({}, 0.5),
    "model": (RULES_OFF, None),
    # faithfulness as the expected share of stated statements (RAGAS's ratio) instead of P(all stated)
    "judge-share": (SHARE, None),
    "rules-share": (SHARE, 0.5),
    "model-share": (RULES_OFF | SHARE, None),
    # factual correctness's claims each against the whole other text (one premise per direction)
    "judge-wholefc": ({"judge_claims_evidence": "whole"}, None),
    # every statement's premise its two best passages instead of three (fewer prompt tokens a verdict)
    "judge-ev2": ({"judge_evidence": 2}, None),
    # P(yes) contrasted with the model's P(yes) for the statement alone
    "judge-contrast": ({"judge_contrastive": "no-premise"}, None),
    "model-contrast": (RULES_OFF | {"judge_contrastive": "no-premise"}, None),
    "judge-contrast-share": (SHARE | {"judge_contrastive": "no-premise"}, None),
}


def judged_record(answer: dict[str, Any]) -> dict[str, Any]:
    return {"id": answer["id"], "question": answer["question"], "answer": answer["answer"],
            "reference": answer["reference"], "contexts": [{"text": c["text"]} for c in answer["contexts"]]}


def design_judge_id(design: str, settings: Any) -> str:
    """The judge a design's judgments come from: its id (rules, prompts, options) and the constant
    standing in for the model, if any."""
    from rag_lab.evaluate.judge.factory import judge_id
    from rag_lab.evaluate.run.runner import judge_settings

    changes, constant = DESIGNS[design]
    own = judge_id(judge_settings(settings.model_copy(update=changes), "local"))
    return own if constant is None else f"{own}+p={constant}"


def judge_one(scorer: Any, answer: dict[str, Any], metric: str, design: str, judge_name: str) -> dict[str, Any]:
    judge = scorer.judge_of(metric)
    transcript = judge.transcript = [] if judge is not None and hasattr(judge, "transcript") else None
    started = time.perf_counter()
    try:
        scores, errors = scorer.score(judged_record(answer))
    finally:
        if transcript is not None:
            judge.transcript = None
    return {"id": answer["id"], "question_id": answer["question_id"], "generator": answer["generator"],
            "metric": metric, "design": design, "judge": judge_name, "answer": answer["answer"], "score": scores.get(metric),
            "error": errors.get(metric), "seconds": round(time.perf_counter() - started, 2), "replies": transcript or []}


def build_scorers(design: str, settings: Any) -> dict[str, Any]:
    """One scorer per metric, without the judged-score cache: every judgment records its verdicts
    (which rule decided each); the model's own verdicts still come from the verdict store."""
    from rag_lab.evaluate.judge import build_judge
    from rag_lab.evaluate.run.runner import judge_settings
    from rag_lab.evaluate.run.scorer import Scorer

    changes, constant = DESIGNS[design]
    own = settings.model_copy(update=changes)
    if constant is None:
        llm = build_judge(judge_settings(own, "local"))
    else:
        from tests.evaluate.judge_doubles import VerdictLLM

        llm = VerdictLLM(p=constant)
    return {m: Scorer(own, judge_llm=llm, cache=None, metrics=[m]) for m in METRICS}


def table(rows: list[dict[str, Any]], answers: list[dict[str, Any]], designs: list[str]) -> str:
    label_of = {a["id"]: a["label"] for a in answers}
    lines = ["| metric | design | judgments | failures | ROC AUC [95 % CI, by question] | balanced acc. (0.5) | "
             "pairwise acc. (pairs) | refusals scored 0 | s/judgment | decided by |", "|---" * 10 + "|"]
    for metric in METRICS:
        for design in designs:
            mine = [r | {"label": label_of[r["id"]]} for r in rows if r["metric"] == metric and r["design"] == design]
            if not mine:
                continue
            a = label_agreement(mine, LABEL_OF[metric])
            fmt = (lambda v: "–" if v is None else f"{v:.3f}")
            decided = ", ".join(f"{k} {v}" for k, v in sorted(decided_by(mine).items(), key=lambda kv: -kv[1]))
            interval = auc_interval(mine, LABEL_OF[metric])
            auc = fmt(a.auc) + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")
            lines.append(f"| {metric} | {design} | {a.judgments} | {a.failures} | {auc} | "
                         f"{fmt(a.balanced_accuracy)} | {fmt(a.pairwise_accuracy)} ({a.pairs}) | {a.refusals_scored_zero} | "
                         f"{sum(r['seconds'] for r in mine) / len(mine):.1f} | {decided or '–'} |")
    return "\n".join(lines)


def direction_table(rows: list[dict[str, Any]], answers: list[dict[str, Any]], designs: list[str]) -> str:
    """Factual correctness's AUC per direction: where its F1 gains and loses against the labels."""
    by_id = {a["id"]: a for a in answers}
    lines = ["| design | F1 (the metric) | answer's claims in the reference | reference's claims in the answer |",
             "|---|---|---|---|"]
    for design in designs:
        mine = [r for r in rows if r["metric"] == "factual_correctness" and r["design"] == design
                and by_id[r["id"]]["label"].get("correct") is not None and r["score"] is not None]
        if not mine:
            continue
        sides = [direction_means(r, by_id[r["id"]]["reference"]) for r in mine]
        label = [by_id[r["id"]]["label"]["correct"] for r in mine]

        def auc(values: list[float | None]) -> str:
            pos = [v if v is not None else 0.0 for v, y in zip(values, label) if y == 1]
            neg = [v if v is not None else 0.0 for v, y in zip(values, label) if y == 0]
            found = roc_auc(pos, neg)
            return "–" if found is None else f"{found:.3f}"

        lines.append(f"| {design} | {auc([r['score'] for r in mine])} | {auc([a for a, _ in sides])} | "
                     f"{auc([b for _, b in sides])} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("tune", "test", "all"), required=True)
    parser.add_argument("--designs", default=",".join(DESIGNS), help="comma-separated: " + ", ".join(DESIGNS))
    parser.add_argument("--set", type=Path, default=SET_DIR)
    parser.add_argument("--out", type=Path, default=Path("runs/judge_natural"))
    parser.add_argument("--limit", type=int, default=None, help="the first N answers of the half (a try)")
    parser.add_argument("--metrics", default=",".join(METRICS), help="comma-separated: " + ", ".join(METRICS))
    parser.add_argument("--labelled-only", action="store_true",
                        help="judge the answers labelled so far (the others wait for their labels)")
    parser.add_argument("--report-only", action="store_true", help="print the table from what is recorded")
    args = parser.parse_args()
    designs = [d for d in args.designs.split(",") if d]
    metrics = [m for m in args.metrics.split(",") if m]
    unknown = sorted(set(designs) - set(DESIGNS)) + sorted(set(metrics) - set(METRICS))
    if unknown:
        print(f"error: unknown design(s) or metric(s) {', '.join(unknown)}: use {', '.join(DESIGNS)}; "
              f"{', '.join(METRICS)}", file=sys.stderr)
        return 2
    answers = load_labelled(args.set, args.half, args.labelled_only)[:args.limit]
    out = args.out / args.half
    out.mkdir(parents=True, exist_ok=True)
    path = out / "judgments.jsonl"
    from rag_lab.evaluate.ablation.checkpoint import append_record, read_records

    rows = read_records(path, "judgments", required=("id", "metric", "design")) if path.is_file() else []
    text_of = {a["id"]: a["answer"] for a in answers}
    from rag_lab.config import get_settings

    settings = get_settings()
    judges = {design: design_judge_id(design, settings) for design in designs}
    rows = [r for r in rows if r.get("judge") == judges.get(r["design"])]
    # a judgment without its verdicts (a score an older run served from the judged-score cache) is redone
    rows = [r for r in rows if r.get("replies") or r["score"] is None]
    done = {(r["id"], r["metric"], r["design"]) for r in rows if text_of.get(r["id"]) == r["answer"]}
    if not args.report_only:
        with path.open("a", encoding="utf-8") as log:
            for design in designs:
                todo = [(a, m) for a in answers for m in metrics if (a["id"], m, design) not in done]
                if not todo:
                    continue
                scorers = build_scorers(design, settings)
                for number, (answer, metric) in enumerate(todo, start=1):
                    row = judge_one(scorers[metric], answer, metric, design, judges[design])
                    append_record(log, row)
                    rows.append(row)
                    print(f"[{design} {number}/{len(todo)}] {answer['id']} {metric}: {row['score']} "
                          f"{row['seconds']:.1f}s {row['error'] or ''}", flush=True)
    ids = {a["id"] for a in answers}
    latest = {(r["id"], r["metric"], r["design"]): r for r in rows if r["id"] in ids and text_of[r["id"]] == r["answer"]}
    print(f"\n{args.set} ({args.half} half): {len(answers)} answers over {len({a['question_id'] for a in answers})} questions")
    print(table(list(latest.values()), answers, designs))
    if "factual_correctness" in metrics:
        print("\nfactual correctness by direction (ROC AUC of each direction's mean P(yes))")
        print(direction_table(list(latest.values()), answers, designs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
