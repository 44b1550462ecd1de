"""The demo right for the question, not its wording: sixty paraphrases answered in every mode.

    PYTHONPATH=. nice -n 15 python benchmarks/answer_paraphrases.py --out runs/answer_paraphrases.jsonl \\
        [--modes dense,bm25,fusion,hybrid,agent] [--groups demo,iel_annual_4] [--limit N] [--summarize]

``benchmarks/answer_paraphrases.jsonl`` holds ten paraphrases each of the demo question and of five
table questions of texas_childcare_full's rest split, each with the figure(s) it must state, written
and committed before any was answered (benchmarks/answer_paraphrases.md). Each is answered in each
mode with ``rag-lab ask``'s defaults (the configured generator; the LLM rerank off for the local model,
as the demo runs it) through the answer cache, and judged by its statements
(:func:`rag_lab.evaluate.facts.expected.check_expected`: every expected figure stated by the answer's
own sentence, no other figure of its kind; a quoted row holding the right figure does not count).
Every answer is appended to ``--out`` as it is made: a rerun skips the (mode, id) pairs already there,
so an interrupted run resumes where it stopped; answers are made question by question in every mode (the first
paraphrase of every group, then the second, …), so a partial run has the same questions in every mode. The summary gives the share right per mode (and per
question group), with the count of non-answers. ``kendra`` needs the AWS service (an index id and
credentials): pass it in ``--modes`` where one is configured.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

QUESTIONS = Path(__file__).with_suffix(".jsonl")
MODES = ("dense", "bm25", "fusion", "hybrid", "agent")


def load_questions(groups: list[str] | None, limit: int | None) -> list[dict]:
    items = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    if groups:
        items = [item for item in items if item["group"] in groups]
    if limit:  # the first ``limit`` paraphrases of each group
        items = [item for item in items if int(item["id"].split("#")[1]) <= limit]
    return items


def judged(record: dict) -> dict:
    from rag_lab.evaluate.facts.expected import check_expected

    check = check_expected(record["answer"], record["expected"], record["question"])
    return {**record, "right": check.right, "non_answer": check.non_answer, "reason": check.reason}


def summarize(records: list[dict]) -> str:
    rows = [judged(r) for r in records]
    by_mode: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_mode[row["mode"]].append(row)
    groups = sorted({row["group"] for row in rows})
    lines = ["| mode | right | share right | non-answers | " + " | ".join(groups) + " |",
             "|---|---|---|---|" + "---|" * len(groups)]
    for mode, items in by_mode.items():
        per_group = []
        for group in groups:
            of_group = [r for r in items if r["group"] == group]
            per_group.append(f"{sum(r['right'] for r in of_group)}/{len(of_group)}" if of_group else "—")
        lines.append(f"| {mode} | {sum(r['right'] for r in items)}/{len(items)} | "
                     f"{sum(r['right'] for r in items) / len(items):.2f} | {sum(r['non_answer'] for r in items)} | "
                     + " | ".join(per_group) + " |")
    seconds = [r["seconds"] for r in rows if not r.get("cached")]
    if seconds:
        lines.append(f"seconds per answer made (not cached): median {sorted(seconds)[len(seconds) // 2]:.1f} "
                     f"over {len(seconds)}")
    return "\n".join(lines)


def answer_all(items: list[dict], modes: list[str], out: Path, dataset_name: str) -> None:
    from rag_lab.answer.adapter import make_answerer
    from rag_lab.config import load_settings
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.plan.answering import CachedAnswerer, answer_style_input, model_id
    from rag_lab.index import CorpusIndex
    from rag_lab.models.llm.disk_cache import DiskCache
    from rag_lab.progress import progress_bar

    settings = load_settings()
    dataset = resolve_dataset(dataset_name, settings.datasets_dir)
    done = {(r["mode"], r["id"]) for r in read(out)}
    # one question in every mode, then the next group's, paraphrase 1 of every group first, then 2, …: a run
    # stopped early has answered the same questions in every mode, spread over the groups
    order = sorted(((int(item["id"].split("#")[1]), item["group"], m), mode, item)
                   for m, mode in enumerate(modes) for item in items)
    todo = [(mode, item) for _, mode, item in order if (mode, item["id"]) not in done]
    if not todo:
        return
    fingerprint = CorpusIndex.open(dataset, settings).manifest.fingerprint
    options = {"rerank": False} if settings.llm_provider == "local" else {}
    cache = DiskCache(settings.cache_dir / "llm.sqlite")
    answerers: dict[str, CachedAnswerer] = {}
    try:
        with out.open("a") as sink, progress_bar(total=len(todo), desc="paraphrases", unit="answer") as bar:
            for mode, item in todo:
                params = {} if mode == "agent" else options
                if mode not in answerers:
                    answerers[mode] = CachedAnswerer(
                        mode, lambda m=mode, p=params: make_answerer(m, settings, dataset, **p),
                        model_id=model_id(settings, for_agent=mode == "agent"),
                        inputs={"params": params, "index": fingerprint, "context_lines": settings.context_lines,
                                **answer_style_input(settings)}, cache=cache)
                started = time.perf_counter()
                fields, cached = answerers[mode].answer(item["question"])
                record = {**item, "mode": mode, "answer": fields["answer"], "cached": cached,
                          "seconds": round(time.perf_counter() - started, 2), "load": os.getloadavg()[0],
                          "contexts": [c["text"] for c in fields["contexts"]]}
                sink.write(json.dumps(record) + "\n")
                sink.flush()
                bar.update(1)
    finally:
        cache.close()


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare_full")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--groups", default="", help="comma-separated question groups (default: all six)")
    parser.add_argument("--limit", type=int, default=None, help="the first N paraphrases of each group")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--summarize", action="store_true", help="only print the summary of --out")
    parser.add_argument("--export", type=Path, default=None,
                        help="also write each answer of --out with its verdict, without its contexts (a file to commit)")
    args = parser.parse_args()
    items = load_questions([g for g in args.groups.split(",") if g] or None, args.limit)
    if not args.summarize:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        answer_all(items, [m for m in args.modes.split(",") if m], args.out, args.dataset)
    records = read(args.out)
    if args.export:
        args.export.write_text("".join(json.dumps({k: v for k, v in judged(r).items() if k != "contexts"}) + "\n"
                                       for r in records))
    print(summarize(records))


if __name__ == "__main__":
    main()
