"""Read the natural answers for labelling, and check a labels file (rules: docs/judge-labels.md).

    python benchmarks/label_natural_answers.py --show 0:10          # answers 0-9 of answers.jsonl, to read
    python benchmarks/label_natural_answers.py --show 'texas_childcare_full/x-qa#Q3::agent'
    python benchmarks/label_natural_answers.py --check labels.jsonl  # every field and id valid?

``--show`` prints an answer as its labeller reads it: the question, the reference, the answer, and
each context the generator was given as ``[Doc N]`` (the order of its prompt), nothing judged.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.judge_labels.natural import SET_DIR, read_jsonl  # noqa: E402

FIELDS = {"id", "faithful", "correct", "partial", "refusal", "note"}


def show(answer: dict) -> str:
    parts = [f"=== {answer['id']} ({answer['split']}, {answer['generator']})",
             f"QUESTION: {answer['question']}", f"REFERENCE: {answer['reference']}", f"ANSWER: {answer['answer']}"]
    parts += [f"--- [Doc {n}] {c.get('filename')} p.{c.get('page')}\n{c['text']}"
              for n, c in enumerate(answer["contexts"], start=1)]
    return "\n".join(parts) + "\n"


def check(labels: list[dict], answer_ids: set[str]) -> list[str]:
    """What is wrong with ``labels``, one line each (empty: nothing)."""
    problems, seen = [], set()
    for n, row in enumerate(labels, start=1):
        where = f"line {n} ({row.get('id')})"
        if set(row) != FIELDS:
            problems.append(f"{where}: fields {sorted(set(row) ^ FIELDS)} missing or extra (want {sorted(FIELDS)})")
        if row.get("id") not in answer_ids:
            problems.append(f"{where}: no such answer id in answers.jsonl")
        if row.get("id") in seen:
            problems.append(f"{where}: labelled twice")
        seen.add(row.get("id"))
        if row.get("faithful") not in (0, 1, None) or row.get("correct") not in (0, 1):
            problems.append(f"{where}: faithful must be 0, 1 or null and correct 0 or 1")
        if row.get("refusal") and row.get("faithful") is not None:
            problems.append(f"{where}: a refusal has no claims: faithful is null")
        if row.get("faithful") is None and not row.get("refusal"):
            problems.append(f"{where}: faithful is null only for a refusal")
        if not str(row.get("note", "")).strip():
            problems.append(f"{where}: the note says what the label rests on")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=SET_DIR)
    parser.add_argument("--show", help="START:END (positions in answers.jsonl) or one answer id")
    parser.add_argument("--check", type=Path, help="a labels file to validate against answers.jsonl")
    args = parser.parse_args()
    answers = read_jsonl(args.set / "answers.jsonl")
    if args.show:
        if "::" in args.show:
            chosen = [a for a in answers if a["id"] == args.show]
        else:
            start, _, end = args.show.partition(":")
            chosen = answers[int(start or 0):int(end) if end else None]
        if not chosen:
            print(f"error: no answer matches {args.show!r} ({len(answers)} answers)", file=sys.stderr)
            return 2
        print("\n".join(show(a) for a in chosen))
    if args.check:
        problems = check(read_jsonl(args.check), {a["id"] for a in answers})
        print("\n".join(problems) or f"{args.check}: every label valid")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
