"""Evidence-first answers on one split: key-fact recall/precision, invented figures, seconds per answer.

    PYTHONPATH=. nice -n 5 python benchmarks/evidence_answers.py --split dev [--limit 24] \\
        --out runs/evidence-dev.jsonl [--config configs/texas_childcare_full.toml] [--summarize]

Answers every question of the split whose reference states a key fact the question does not, with the
recommended configuration's retriever and the configured generator in the ``evidence`` answer style
(`rag-lab ask --config … --answer-style evidence`, one question at a time, as `ask` runs it). Each
answer is appended to ``--out`` as it is made (a rerun skips the ids already there, so an interrupted
run resumes). The summary, also printed by ``--summarize`` alone, gives with 95 % percentile-bootstrap
CIs: the evidence's coverage (the reference's key facts the selected evidence states), key-fact
recall and precision of the answer's statements (:mod:`rag_lab.evaluate.facts.key_facts`; the whole
text beside them for comparison), the shares of non-answers and of answers stating a figure no chunk
given to the generator states or one from a line about something else (:mod:`rag_lab.evaluate.facts.placement`), p50/p95 seconds per answer, and the
machine's load average while the answers were made. ``--limit N`` spreads N questions over the
split's source documents (:func:`rag_lab.splits.spread_by_source`).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np


def bootstrap_ci(values: list[float], rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    data = np.asarray(values, dtype=float)
    means = data[rng.integers(0, len(data), size=(rounds, len(data)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def score(record: dict) -> dict:
    from rag_lab.answer.statements import statement_text
    from rag_lab.evaluate.facts.key_facts import key_fact_precision, key_fact_recall
    from rag_lab.evaluate.facts.placement import check_figures

    question, reference, answer = record["question"], record["reference"], record["answer"]
    figures = check_figures(answer, list(record["contexts"]), question)
    evidence = "\n".join(item["text"] for item in record["evidence"])
    # the whole rendered text (sentence + quoted lines), read as if it all were statements: what the
    # measures read before they read statements only (kept for comparison with older tables)
    whole = answer.replace("“", " ").replace("”", " ")
    return {"recall": key_fact_recall(answer, reference, question),
            "whole_recall": key_fact_recall(whole, reference, question),
            "precision": key_fact_precision(answer, reference, question),
            "whole_precision": key_fact_precision(whole, reference, question),
            "coverage": key_fact_recall(evidence, reference, question),
            "non_answer": not statement_text(answer).strip(),
            "invented": bool(figures.uncontained), "invented_facts": figures.uncontained,
            "misplaced": bool(figures.misplaced), "misplaced_facts": figures.misplaced}


def summarize(records: list[dict]) -> str:
    scores = [score(r) for r in records]
    lines = [f"{len(records)} answers"]

    def row(name: str, values: list[float]) -> None:
        low, high = bootstrap_ci(values)
        lines.append(f"| {name} | {np.mean(values):.3f} | [{low:.3f}, {high:.3f}] | {len(values)} |")

    lines += ["| measure | mean | 95 % CI | n |", "|---|---|---|---|"]
    row("evidence coverage (key facts in the selected evidence)", [s["coverage"] or 0.0 for s in scores])
    row("key-fact recall (the answer's statements)", [s["recall"] or 0.0 for s in scores])
    row("key-fact recall of the whole text, quotes read as statements", [s["whole_recall"] or 0.0 for s in scores])
    row("key-fact precision (answers stating a fact)", [s["precision"] for s in scores if s["precision"] is not None])
    row("key-fact precision of the whole text (stating a fact)",
        [s["whole_precision"] for s in scores if s["whole_precision"] is not None])
    row("non-answers (quotes only, no statement)", [float(s["non_answer"]) for s in scores])
    row("answers stating a figure no context states (uncontained)", [float(s["invented"]) for s in scores])
    row("answers stating a figure from a line about something else (misplaced)", [float(s["misplaced"]) for s in scores])
    row("answers rebuilt from evidence (figure check)", [float(r.get("rebuilt", False)) for r in records])
    seconds = [r["seconds"] for r in records]
    loads = [r["load"] for r in records if "load" in r]
    lines.append(f"seconds per answer: p50 {np.percentile(seconds, 50):.1f}, p95 {np.percentile(seconds, 95):.1f} "
                 f"(mean {np.mean(seconds):.1f}); 1-min load average while answering: median {np.median(loads):.1f}, "
                 f"max {max(loads):.1f} on {os.cpu_count()} cores")
    for flaw in ("invented", "misplaced"):
        found = [(r["id"], s[f"{flaw}_facts"]) for r, s in zip(records, scores) if s[flaw]]
        if found:
            lines.append(f"{flaw}: " + "; ".join(f"{qid.split('/')[-1]} {facts}" for qid, facts in found))
    return "\n".join(lines)


def questions(dataset, split: str, limit: int | None) -> list:
    from rag_lab.evaluate.facts.key_facts import has_key_facts
    from rag_lab.splits import select_split, spread_by_source

    pairs = {p.id: p for p in dataset.load_qa()}
    ids = select_split(list(pairs), dataset.dev_split, split, dataset.name)
    ids = [i for i in ids if pairs[i].reference_answer and has_key_facts(pairs[i].reference_answer, pairs[i].question)]
    if limit:
        ids = spread_by_source(ids, {qid: list(pairs[qid].source_files) for qid in ids}, limit)
    return [pairs[i] for i in ids]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare_full")
    parser.add_argument("--split", default="dev", choices=("all", "dev", "rest"))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--config", type=Path, default=Path("configs/texas_childcare_full.toml"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--summarize", action="store_true", help="only print the summary of --out")
    args = parser.parse_args()
    done = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()] if args.out.exists() else []
    if not args.summarize:
        from rag_lab.answer import make_answerer
        from rag_lab.config import load_settings
        from rag_lab.datasets import resolve_dataset
        from rag_lab.retrieve.tuned_config import read_tuned_config

        settings = load_settings(answer_style="evidence")
        dataset = resolve_dataset(args.dataset, settings.datasets_dir)
        config = read_tuned_config(args.config)
        answerer = make_answerer(config.mode, settings, dataset, rerank=False, **config.answer_params())
        seen = {r["id"] for r in done}
        todo = [p for p in questions(dataset, args.split, args.limit) if p.id not in seen]
        print(f"{len(todo)} to answer ({len(seen)} in {args.out} already)", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as out:
            for n, pair in enumerate(todo, start=1):
                start = time.perf_counter()
                answer = answerer.query(pair.question)
                seconds = time.perf_counter() - start
                record = {"id": pair.id, "question": pair.question, "reference": pair.reference_answer,
                          "answer": answer.answer, "evidence": answer.evidence,
                          "figure_citations": answer.figure_citations,
                          "rebuilt": _rebuilt(answer),
                          "contexts": [c.text for c in answer.chunks], "seconds": seconds,
                          "timings": answer.timings, "load": os.getloadavg()[0]}
                out.write(json.dumps(record) + "\n")
                out.flush()
                done.append(record)
                print(f"[{n}/{len(todo)}] {seconds:.1f} s  {pair.id.split('/')[-1]}: {answer.answer[:100]!r}", flush=True)
    print(summarize(done))


def _rebuilt(answer) -> bool:
    """A rebuilt answer is the quoted evidence alone: its text starts with a quotation mark."""
    return answer.answer.startswith("“")


if __name__ == "__main__":
    main()
