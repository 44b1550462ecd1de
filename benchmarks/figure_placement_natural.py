"""The answer measures on the judge's natural-answer set: how many answers are non-answers, state a
figure no context states (uncontained), or one from a line about something else (misplaced), per
generator — and what the measure before this one (a figure's value anywhere in the context, quotes
read as the answer) counted.

    PYTHONPATH=. python benchmarks/figure_placement_natural.py

Reads datasets/texas_childcare_full/natural_answers/answers.jsonl (each answer with the contexts it was
given); no model runs. Prints one markdown table; ``--list`` adds every flagged answer with its figures.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

ANSWERS = Path(__file__).resolve().parents[1] / "datasets/texas_childcare_full/natural_answers/answers.jsonl"


def value_anywhere(answer: str, contexts: list[str], question: str) -> list[str]:
    """The measure this replaces: the answer's facts (quotes included) whose value no context states anywhere."""
    from rag_lab.evaluate.facts.key_facts import _facts_not_asked, _is_stated, claimed_text, stated_values

    context = stated_values("\n".join(contexts))
    return [name for name, fact in _facts_not_asked(claimed_text(answer), question).items()
            if not _is_stated(fact, context)]


def main() -> None:
    from rag_lab.answer.statements import is_non_answer
    from rag_lab.evaluate.facts.placement import check_figures

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="also list every flagged answer")
    args = parser.parse_args()
    rows = [json.loads(line) for line in ANSWERS.read_text().splitlines() if line.strip()]
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    flagged = []
    for row in rows:
        contexts = [c["text"] for c in row["contexts"]]
        check = check_figures(row["answer"], contexts, row["question"])
        tally = counts[row["generator"]]
        tally["answers"] += 1
        tally["non-answers"] += is_non_answer(row["answer"])
        tally["state a figure"] += bool(check.stated)
        tally["uncontained"] += bool(check.uncontained)
        tally["misplaced"] += bool(check.misplaced)
        tally["before: value nowhere"] += bool(value_anywhere(row["answer"], contexts, row["question"]))
        if check.uncontained or check.misplaced:
            flagged.append((row["id"].split("/")[-1], check.uncontained, check.misplaced, row["answer"].split("\n")[0]))
    columns = ["answers", "non-answers", "state a figure", "uncontained", "misplaced", "before: value nowhere"]
    print("| generator | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for generator, tally in sorted(counts.items()):
        print(f"| {generator} | " + " | ".join(str(tally[c]) for c in columns) + " |")
    total = {c: sum(t[c] for t in counts.values()) for c in columns}
    print("| all | " + " | ".join(str(total[c]) for c in columns) + " |")
    if args.list:
        for item in flagged:
            print(*item, sep=" · ")


if __name__ == "__main__":
    main()
