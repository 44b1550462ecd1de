"""Does the judge model's likelihood of a statement separate faithful answers better than its P(yes)?

For every statement the shipped judge left to the model (rule ``model`` in ``judge_natural.py``'s recorded
verdicts of the ``judge`` design), the local 1.5B model is made to write the statement word for word (a
grammar allows only its text) twice: after its evidence passages and the question, and after the question
alone; llama.cpp returns each written token's log-probability under the model, before the grammar. A
statement the evidence states should be likelier with it (pointwise mutual information, *pmi*) or at least
likely (*with*). Each signal becomes a verdict p = sigmoid(k · signal + b), replaces the model's P(yes) in
the answer's product of verdicts (the rules' verdicts kept), and the answers' faithfulness is ranked
against the labels, beside the shipped P(yes).

    python benchmarks/judge_likelihood.py --half tune     # ≈ 10–20 s a statement on 2 cores, resumable
    python benchmarks/judge_likelihood.py --half tune --report-only

Written to ``<out>/<half>/likelihoods.jsonl``; run ``judge_natural.py --designs judge`` on the half first.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.judge_labels.agreement import roc_auc  # noqa: E402
from benchmarks.judge_labels.natural import SET_DIR, load_labelled, read_jsonl, verdicts_of  # noqa: E402

WITH_PREMISE = "Premise: {premise}\nQuestion: {question}\nAnswer from the premise."
ALONE = "Question: {question}\nAnswer."
# (signal, k, b) rows of the table; the mixes average the verdict's log-odds with P(yes)'s
SIGNALS = (("pmi", 1.0, 0.0), ("pmi", 2.0, 1.0), ("with", 1.0, 1.0), ("with", 2.0, 1.0))
MIXES = (0.25, 0.5)


def forced_logprobs(llm: Any, prompt: str, statement: str) -> list[float]:
    """The model's log-probability of each token of ``statement`` written after ``prompt``."""
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    response = llm.chat([ChatMessage(role=MessageRole.USER, content=prompt)], max_tokens=len(statement) + 8,
                        temperature=0.0, grammar="root ::= " + json.dumps(statement), logprobs=True, top_logprobs=1)
    content = response.raw["choices"][0]["logprobs"]["content"]
    return [float(token["logprob"]) for token in content]


def judge_judgments(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last ``judge`` faithfulness judgment of each answer, by answer id."""
    return {r["id"]: r for r in rows if r["metric"] == "faithfulness" and r["design"] == "judge" and r.get("judge")}


def measure(judgments: dict[str, dict[str, Any]], answers: dict[str, dict[str, Any]], out: Path) -> None:
    from rag_lab.config import get_settings
    from rag_lab.evaluate.judge.factory import build_judge
    from rag_lab.evaluate.run.runner import judge_settings

    done = {(d["id"], d["statement"]) for d in read_jsonl(out)} if out.is_file() else set()
    todo = [(i, v) for i, j in judgments.items() for v in verdicts_of(j)
            if v["rule"] == "model" and (i, v["statement"]) not in done]
    print(f"{len(todo)} statements to measure ({len(done)} done)", flush=True)
    if not todo:
        return
    llm = build_judge(judge_settings(get_settings(), "local"))
    started = time.perf_counter()
    with out.open("a", encoding="utf-8") as sink:
        for n, (answer_id, verdict) in enumerate(todo, 1):
            question = answers[answer_id]["question"]
            with_premise = forced_logprobs(llm, WITH_PREMISE.format(premise=verdict["evidence"], question=question),
                                           verdict["statement"])
            alone = forced_logprobs(llm, ALONE.format(question=question), verdict["statement"])
            sink.write(json.dumps({"id": answer_id, "statement": verdict["statement"], "p_yes": verdict["p"],
                                   "with": with_premise, "alone": alone}) + "\n")
            sink.flush()
            print(f"[{n}/{len(todo)}] {time.perf_counter() - started:.0f}s", flush=True)


def signal(record: dict[str, Any], kind: str) -> float:
    mean_with = sum(record["with"]) / len(record["with"])
    return mean_with if kind == "with" else mean_with - sum(record["alone"]) / len(record["alone"])


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def answer_score(judgment: dict[str, Any], likelihoods: dict[tuple[str, str], dict[str, Any]],
                 design: tuple[str, float, float, float] | None) -> float | None:
    """The product of the answer's verdicts, the model's replaced by ``design`` = (signal, k, b, weight of
    the likelihood against P(yes)); None: P(yes) itself. None when a statement was not measured."""
    product = 1.0
    for v in verdicts_of(judgment):
        p = v["p"]
        if v["rule"] == "model" and design is not None:
            record = likelihoods.get((judgment["id"], v["statement"]))
            if record is None:
                return None
            kind, k, b, weight = design
            p = 1 / (1 + math.exp(-(weight * (k * signal(record, kind) + b) + (1 - weight) * logit(v["p"]))))
        product *= p
    return product


def report(judgments: dict[str, dict[str, Any]], answers: dict[str, dict[str, Any]], out: Path) -> str:
    likelihoods = {(d["id"], d["statement"]): d for d in read_jsonl(out)} if out.is_file() else {}
    designs: list[tuple[str, tuple[str, float, float, float] | None]] = [("P(yes) (the shipped verdict)", None)]
    designs += [(f"{kind}, k {k:g}, b {b:g}", (kind, k, b, 1.0)) for kind, k, b in SIGNALS]
    designs += [(f"{kind} k {k:g} b {b:g} mixed {w:g} with P(yes)", (kind, k, b, w))
                for kind, k, b in SIGNALS[:1] + SIGNALS[2:3] for w in MIXES]
    lines = ["| verdict of the model's statements | answers | ROC AUC | balanced acc. (0.5) |", "|---|---|---|---|"]
    for scope in ("every answer", "answers with a statement the model decides"):
        lines.append(f"| *{scope}* | | | |")
        for name, design in designs:
            pos, neg = [], []
            for answer_id, judgment in judgments.items():
                label = answers[answer_id]["label"]["faithful"]
                if label is None or (scope != "every answer" and not any(v["rule"] == "model" for v in verdicts_of(judgment))):
                    continue
                score = answer_score(judgment, likelihoods, design)
                if score is not None:
                    (pos if label == 1 else neg).append(score)
            if not pos or not neg:
                continue
            balanced = (sum(s >= 0.5 for s in pos) / len(pos) + sum(s < 0.5 for s in neg) / len(neg)) / 2
            lines.append(f"| {name} | {len(pos) + len(neg)} | {roc_auc(pos, neg):.3f} | {balanced:.3f} |")
    return f"{len(likelihoods)} statements measured\n" + "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=("tune", "test"), required=True)
    parser.add_argument("--set", type=Path, default=SET_DIR)
    parser.add_argument("--out", type=Path, default=Path("runs/judge_natural"))
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    answers = {a["id"]: a for a in load_labelled(args.set, args.half)}
    judged = args.out / args.half / "judgments.jsonl"
    if not judged.is_file():
        raise SystemExit(f"no judgments at {judged}: run benchmarks/judge_natural.py --half {args.half} --designs judge first")
    judgments = judge_judgments(read_jsonl(judged))
    out = args.out / args.half / "likelihoods.jsonl"
    if not args.report_only:
        measure(judgments, answers, out)
    print(report(judgments, answers, out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
