"""How far a judge agrees with labels: RAGAS's judged metrics on the judge validation set.

    python benchmarks/judge_validation.py [--judge local[:MODEL] | openai:MODEL …] [--skip K] [--limit N]
        [--metrics faithfulness,factual_correctness] [--own N] [--out runs/judge_validation]

Each question of ``datasets/texas_childcare_full/judge_validation.jsonl`` (outside the dev split)
has its reference chunks and up to five answers: the reference (supported), the reference with one key
fact changed, the reference plus one unsupported sentence, the reference with one sentence negated,
and (where a name qualifies) the reference with one name swapped for another of the corpus. Every (answer, metric) judgment is
appended to ``<out>/<judge>/judgments.jsonl`` as it finishes (resumable: a rerun skips what is there)
and judged scores are cached like ``rag-lab eval``'s (``<data_dir>/cache/llm.sqlite``).

Table 1, per metric: judgments, failure rate (no score after the judge's one retry), pairwise
accuracy (supported scored above each unsupported answer of its question; a failure loses its
pairs), ROC AUC, both again for the 0.5 cut of probability verdicts (``RAG_LAB_JUDGE_NLI=probability``)
and per perturbation kind, wall and CPU seconds and tokens per judgment (the machine is shared: CPU seconds
are what an idle 2-core machine would need, roughly). Table 2 (``--own N``): on the local
generator's own answers to the first N questions (same chunks), faithfulness beside the key-fact
check (silver label: every number the answer states is in its contexts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SET_FILE = Path("datasets/texas_childcare_full/judge_validation.jsonl")
DEFAULT_METRICS = ("faithfulness", "factual_correctness")
# The judge's levers (per-statement NLI, grounded NLI, list bounds) were tried and chosen on the set's
# first questions (question 11's replies were read too): report agreement on the rest (``--skip 11``).
DEV_QUESTIONS = 11


def load_set(path: Path, limit: int | None, skip: int = 0) -> list[dict[str, Any]]:
    """Questions ``skip + 1`` … ``skip + limit`` of the set (all after ``skip`` without a limit)."""
    if not path.is_file():
        raise SystemExit(f"{path} not found: run `python benchmarks/build_judge_validation.py` first")
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if skip >= len(items):
        raise SystemExit(f"--skip {skip}: {path} has only {len(items)} questions")
    items = items[skip:]
    return items[:limit] if limit else items


def read_done(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The judgments recorded in ``path`` by (question id, label, metric); a line cut by a crash is
    dropped (and redone), other damage is an error naming the file and line."""
    from rag_lab.evaluate.ablation.checkpoint import read_records

    rows = read_records(path, "judgments", required=("id", "label", "metric"))
    return {(row["id"], row["label"], row["metric"]): row for row in rows}


def inputs_hash(item: dict[str, Any], answer: str) -> str:
    """What a judgment judged: the answer, the reference and the contexts."""
    payload = json.dumps([answer, item["reference"], item["contexts"]], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def same_inputs(row: dict[str, Any], item: dict[str, Any], label: str) -> bool:
    """Whether ``row`` judged what ``item`` holds now for ``label``."""
    answer = next((a["text"] for a in item["answers"] if a["label"] == label), None)
    return answer is not None and row.get("inputs") == inputs_hash(item, answer)


def judge_one(scorer, item: dict[str, Any], label: str, answer: str, metric: str) -> dict[str, Any]:
    from rag_lab.models.llm import track_usage

    record = {"id": item["id"], "question": item["question"], "answer": answer, "reference": item["reference"],
              "contexts": item["contexts"]}
    judge = scorer.judge_of(metric)
    transcript = None
    if judge is not None and hasattr(judge, "transcript"):  # the constrained judge's replies
        transcript = judge.transcript = []
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        with track_usage() as usage:
            scores, errors = scorer.score(record)
    finally:
        if transcript is not None:
            judge.transcript = None
    from rag_lab.evaluate.judge.probability import cut_score

    return {"id": item["id"], "label": label, "metric": metric, "inputs": inputs_hash(item, answer),
            "score": scores.get(metric), "cut_score": cut_score(metric, transcript or [], item["reference"]),
            "error": errors.get(metric), "seconds": round(time.perf_counter() - wall, 2),
            "cpu_seconds": round(time.process_time() - cpu, 2), "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens, "calls": usage.calls,
            # what the judge wrote (statements, quotes, reasons, verdicts); empty for a cached score
            "replies": transcript or []}


def _by_question(rows: list[dict[str, Any]], labels: dict[str, set[str]], field: str = "score",
                 kinds: tuple[str, ...] | None = None) -> dict[str, dict[str, float | None]]:
    """question → {label → ``field``} for the questions whose every answer (of ``kinds``) is judged."""
    by_q: dict[str, dict[str, float | None]] = {}
    for r in rows:
        if kinds is None or r["label"] in kinds:
            by_q.setdefault(r["id"], {})[r["label"]] = r.get(field)
    wanted = {q: (labels[q] if kinds is None else labels[q] & set(kinds)) for q in by_q}
    return {q: v for q, v in by_q.items() if set(v) == wanted[q] and "supported" in v and len(v) > 1}


def _cell(a) -> str:
    acc = f"{a.pairwise_accuracy:.2f} ({a.pairs_tied})" if a.pairwise_accuracy is not None else "–"
    return f"{acc} | {a.auc:.2f}" if a.auc is not None else f"{acc} | –"


def table(rows: list[dict[str, Any]], metrics: list[str], labels: dict[str, set[str]]) -> str:
    """Per metric: overall agreement (score; and the 0.5 cut of probability verdicts where recorded),
    then pairwise accuracy and AUC per perturbation kind (supported against that kind only)."""
    from benchmarks.judge_labels.agreement import agreement
    from benchmarks.judge_labels.validation_set import ALL_LABELS

    kinds = [k for k in ALL_LABELS if k != "supported"]
    lines = ["| metric | judgments | failures | pairwise acc. (ties) | ROC AUC | 0.5 cut: pairwise (ties) | 0.5 cut: AUC | "
             + " | ".join(f"{k}: pairwise (ties) | {k}: AUC" for k in kinds) + " | s/judgment (CPU s) | tokens/judgment |",
             "|---" * (9 + 2 * len(kinds)) + "|"]
    for metric in metrics:
        mine = [r for r in rows if r["metric"] == metric]
        if not mine:
            continue
        complete = _by_question(mine, labels)
        cut = _by_question([r for r in mine if r.get("cut_score") is not None], labels, "cut_score")
        per_kind = [_cell(agreement(_by_question(mine, labels, kinds=("supported", k)))) for k in kinds]
        n = len(mine)
        fails = sum(r["score"] is None for r in mine)
        lines.append(f"| {metric} | {n} ({len(complete)} q) | {fails} ({fails / n:.0%}) | {_cell(agreement(complete))} | "
                     f"{_cell(agreement(cut)) if cut else '– | –'} | " + " | ".join(per_kind) + " | "
                     f"{sum(r['seconds'] for r in mine) / n:.1f} ({sum(r['cpu_seconds'] for r in mine) / n:.1f}) | "
                     f"{sum(r['prompt_tokens'] + r['completion_tokens'] for r in mine) / n:.0f} |")
    return "\n".join(lines)


def decided_table(rows: list[dict[str, Any]], metrics: list[str]) -> str:
    """Per metric and perturbation kind: how many statement verdicts each rule, or the model, decided."""
    from benchmarks.judge_labels.natural import decided_by
    from benchmarks.judge_labels.validation_set import ALL_LABELS

    lines = ["| metric | kind | judgments | statement verdicts decided by |", "|---|---|---|---|"]
    for metric in metrics:
        for kind in ALL_LABELS:
            mine = [r for r in rows if r["metric"] == metric and r["label"] == kind]
            if mine:
                counts = sorted(decided_by(mine).items(), key=lambda kv: -kv[1])
                lines.append(f"| {metric} | {kind} | {len(mine)} | " + (", ".join(f"{k} {v}" for k, v in counts) or "– (cached)") + " |")
    return "\n".join(lines)


def own_answers(items: list[dict[str, Any]], settings, scorer, out: Path, generator=None) -> str:
    """Table 2: the generator's own answers, faithfulness beside the key-fact check (``scorer`` None:
    only what is recorded)."""
    from benchmarks.judge_labels.silver import answer_with_contexts, silver_supported
    from rag_lab.evaluate.facts.key_facts import key_fact_recall

    from rag_lab.evaluate.ablation.checkpoint import append_record

    path = out / "own_answers.jsonl"
    done = {row["id"]: row for row in read_done(path).values()}
    todo = [item for item in items if item["id"] not in done] if scorer is not None else []
    with path.open("a", encoding="utf-8") as log:
        for item in todo:
            answer = answer_with_contexts(settings, item, generator)
            row = judge_one(scorer, item, "own", answer, "faithfulness")
            # facts the question states are not the answer's key facts (as everywhere key_fact_recall is used)
            row |= {"answer": answer, "silver": silver_supported(answer, item["contexts"]),
                    "key_fact_recall": key_fact_recall(answer, item["reference"], item["question"])}
            append_record(log, row)
            done[item["id"]] = row
            print(f"own {len(done)}/{len(items)}: faithfulness={row['score']} silver={row['silver']}", flush=True)
    # the silver label is recomputed from the recorded answer: a fixed rule applies to earlier rows
    rows = [done[i["id"]] | {"silver": silver_supported(done[i["id"]]["answer"], i["contexts"])}
            for i in items if i["id"] in done]
    scored = [r for r in rows if r["score"] is not None]
    agree = sum((r["score"] >= 0.5) == r["silver"] for r in scored)

    def mean(values):
        return f"{sum(values) / len(values):.2f}" if values else "–"

    return ("| own answers | judged | faithfulness failures | agreement (faithfulness ≥ 0.5 ⇔ silver) | "
            "mean faithfulness: silver supported / not | mean key-fact recall |\n|---|---|---|---|---|---|\n"
            f"| {len(rows)} | {len(scored)} | {len(rows) - len(scored)} | "
            f"{agree}/{len(scored)} | {mean([r['score'] for r in scored if r['silver']])} / "
            f"{mean([r['score'] for r in scored if not r['silver']])} | "
            f"{mean([r['key_fact_recall'] for r in rows if r['key_fact_recall'] is not None])} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", default="local", help="PROVIDER[:MODEL], as `rag-lab eval --judge`")
    parser.add_argument("--limit", type=int, default=None, help="N questions of the set (after --skip)")
    parser.add_argument("--skip", type=int, default=0,
                        help=f"leave out the first K questions (the judge's design was chosen on the first "
                             f"{DEV_QUESTIONS}: report on the others with --skip {DEV_QUESTIONS})")
    parser.add_argument("--metrics", default=",".join(DEFAULT_METRICS),
                        help="comma-separated judged metrics (faithfulness, factual_correctness, llm_context_recall, "
                             "llm_context_precision_with_reference, response_relevancy)")
    parser.add_argument("--own", type=int, default=0, help="table 2 on the generator's answers to the first N questions")
    parser.add_argument("--set", type=Path, default=SET_FILE)
    parser.add_argument("--out", type=Path, default=Path("runs/judge_validation"))
    parser.add_argument("--report-only", action="store_true", help="print the tables from what is recorded")
    parser.add_argument("--rules-alone", action="store_true",
                        help="the model replaced by a constant P(yes) = 0.5: what the rules alone decide")
    args = parser.parse_args()

    from rag_lab.config import get_settings
    from rag_lab.evaluate.judge import build_judge, judge_id
    from rag_lab.evaluate.run.runner import judge_settings
    from rag_lab.evaluate.run.scorer import Scorer
    from rag_lab.models.llm.disk_cache import DiskCache

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    items = load_set(args.set, args.limit, args.skip)
    by_id = {item["id"]: item for item in items}
    settings = get_settings()
    judge_cfg = judge_settings(settings, args.judge)
    out = args.out / (judge_id(judge_cfg).replace("/", "_").replace(":", "_") + "+rules-alone" * args.rules_alone)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "judgments.jsonl"
    done = read_done(path)
    # a recorded judgment counts only for the same answer, reference and contexts (a rebuilt set redoes the rest)
    done = {key: row for key, row in done.items() if key[0] not in by_id or same_inputs(row, by_id[key[0]], key[1])}
    todo = [(item, answer, metric) for item in items for metric in metrics for answer in item["answers"]
            if (item["id"], answer["label"], metric) not in done]
    if (todo or args.own) and not args.report_only:
        from rag_lab.evaluate.ablation.checkpoint import append_record

        # one cache and one judge (one model load) for both tables; a Scorer per metric, as a table row is per metric
        cache = DiskCache(settings.cache_dir / "llm.sqlite")
        if args.rules_alone:
            from tests.evaluate.judge_doubles import VerdictLLM

            llm = VerdictLLM(p=0.5)
        else:
            llm = build_judge(judge_cfg)
        scorers = {m: Scorer(settings, judge_llm=llm, cache=None if args.rules_alone else cache, metrics=[m])
                   for m in {*metrics, *(["faithfulness"] if args.own else [])}}
        try:
            with path.open("a", encoding="utf-8") as log:
                # question by question, metric by metric: the three answers of a question share a prompt prefix
                for number, (item, answer, metric) in enumerate(todo, start=1):
                    row = judge_one(scorers[metric], item, answer["label"], answer["text"], metric)
                    append_record(log, row)
                    done[(row["id"], row["label"], metric)] = row
                    print(f"[{number}/{len(todo)}] {item['id']} {answer['label']} {metric}: {row['score']} "
                          f"{row['seconds']:.0f}s {row['error'] or ''}", flush=True)
            if args.own:
                from rag_lab.models.llm import get_llm

                own_answers(items[:args.own], settings, scorers["faithfulness"], out, get_llm(settings))
        finally:
            cache.close()
    ids = {i["id"] for i in items}
    rows = [r for (q, _, _), r in done.items() if q in ids]
    span = f"questions {args.skip + 1}–{args.skip + len(items)}"
    print(f"\n{args.set} ({span}): {len({r['id'] for r in rows})} of {len(items)} judged by {judge_id(judge_cfg)} "
          f"(RAG_LAB_LLM_THREADS={settings.llm_threads})")
    print(table(rows, metrics, {i["id"]: {a["label"] for a in i["answers"]} for i in items}))
    print(decided_table(rows, metrics))
    if args.own:
        print(own_answers(items[:args.own], settings, None, out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
