"""How much key-fact recall the quoted part of an evidence answer can add: the same model sentences,
re-rendered offline under other quoting rules.

    PYTHONPATH=. python benchmarks/evidence_quoting.py runs/evidence-dev-units-all.jsonl

Reads the answers benchmarks/evidence_answers.py wrote (each with its evidence units and the chunks the
generator got) and scores, per rule, key-fact recall, precision and the answer's length: the model's
sentence alone; with the units it quoted (the shipped rule, re-rendered); with those units grown by lines
of their chunk (``-b/+a``: b lines before, a after), and as the answer path shows them (the line before
and after, never onto another quoted unit, a row the question names alone); with the top units of the evidence whatever it
cited; with the whole evidence. No model is called: the sentences are the recorded ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rag_lab.answer.statements import statement_text as model_sentence  # noqa: E402
from rag_lab.evaluate.facts.key_facts import key_fact_precision, key_fact_recall  # noqa: E402


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def grown(record: dict, unit: dict, back: int, ahead: int) -> str:
    """``unit`` (1-based lines of its chunk) with ``back`` lines before and ``ahead`` after it."""
    lines = _lines(record["contexts"][unit["doc"] - 1])
    first, last = unit["first_line"] - 1, unit["last_line"]
    return " ".join([*lines[max(0, first - back):first], unit["text"], *lines[last:last + ahead]])


def quoted_units(record: dict) -> list[dict]:
    """The evidence units the rendered answer quotes (its lines starting with “), in the answer's order."""
    quotes = [line for line in record["answer"].splitlines() if line.startswith("“")]
    return [unit for quote in quotes for unit in record["evidence"] if quote.startswith("“" + unit["text"][:60])][:len(quotes)]


def in_context_texts(record: dict, quoted: list[dict]) -> list[str]:
    """The quoted units as :func:`rag_lab.answer.evidence_answer.in_context` shows them."""
    from llama_index.core.schema import NodeWithScore, TextNode

    from rag_lab.answer.evidence import Evidence
    from rag_lab.answer.evidence_answer import in_context

    nodes = [NodeWithScore(node=TextNode(text=text)) for text in record["contexts"]]
    units = [Evidence(u["doc"], u["first_line"], u["last_line"], u["text"], u["score"]) for u in quoted]
    return [quote.shown.text for quote in in_context(units, nodes, record["question"])]


def renderings(record: dict) -> dict[str, str]:
    sentence, quoted, evidence = model_sentence(record["answer"]), quoted_units(record), record["evidence"]
    rules = {"sentence alone": [], "sentence + quoted units (shipped)": [u["text"] for u in quoted]}
    for back, ahead in ((1, 1), (0, 2), (0, 4), (1, 4)):
        rules[f"sentence + quoted units grown -{back}/+{ahead}"] = [grown(record, u, back, ahead) for u in quoted]
        rules[f"sentence + first 2 quoted grown -{back}/+{ahead}"] = [grown(record, u, back, ahead) for u in quoted[:2]]
    rules["sentence + quoted units in context (in_context, the answer path's rule)"] = in_context_texts(record, quoted)
    rules["sentence + top 3 evidence units"] = [u["text"] for u in evidence[:3]]
    rules["sentence + the whole evidence"] = [u["text"] for u in evidence]
    return {name: "\n".join([sentence, *texts]) for name, texts in rules.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("answers", type=Path, help="a JSONL file of benchmarks/evidence_answers.py")
    records = [json.loads(line) for line in parser.parse_args().answers.read_text().splitlines() if line.strip()]
    table: dict[str, list[tuple[float, float | None, int]]] = {}
    for record in records:
        for name, text in renderings(record).items():
            question, reference = record["question"], record["reference"]
            table.setdefault(name, []).append((key_fact_recall(text, reference, question) or 0.0,
                                               key_fact_precision(text, reference, question), len(text)))
    print(f"{len(records)} answers\n| rule | recall | precision (n) | characters p50 |\n|---|---|---|---|")
    for name, rows in table.items():
        precisions = [p for _, p, _ in rows if p is not None]
        print(f"| {name} | {np.mean([r for r, _, _ in rows]):.3f} | {np.mean(precisions):.3f} ({len(precisions)}) "
              f"| {np.median([n for _, _, n in rows]):.0f} |")


if __name__ == "__main__":
    main()
