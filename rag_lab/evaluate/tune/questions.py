"""Which questions tune chooses on and which confirm: synthetic questions may all be used for
choosing; when the dataset also has human questions, those stay the confirmation (its rest split,
or all of them when it declares none) — a pick made on generated questions is judged by real ones.
Human questions alone: the dev split chooses, the rest confirms."""

from __future__ import annotations

from pathlib import Path

from rag_lab.datasets import Dataset
from rag_lab.evaluate.questions.question_set import HUMAN, human_questions_of
from rag_lab.splits import split_ids


def tuning_questions(dataset: Dataset, dev_ids_for, out: Path, split_seed: int, write_split: bool):
    """(dev queries, rest queries, qrels of both, dev ids, a sentence saying where they came from)."""
    human = human_questions_of(dataset) if dataset.question_origin != HUMAN else None
    if human is None:
        dev, note = dev_ids_for(dataset, out, split_seed, write_split)
        queries, qrels = dataset.judged_queries()
        dev_ids, rest_ids = split_ids(list(queries), dev)
        return {q: queries[q] for q in dev_ids}, {q: queries[q] for q in rest_ids}, qrels, dev, note
    chosen_on, chosen_qrels = dataset.judged_queries()
    split = "rest" if human.dev_split else "all"
    confirm_on, confirm_qrels = human.judged_queries(split=split)
    note = (f"every {dataset.question_origin} question ({len(chosen_on)}) chooses; the human questions "
            f"({'the rest split' if split == 'rest' else 'all of them'}: {len(confirm_on)}) confirm")
    return chosen_on, confirm_on, {**confirm_qrels, **chosen_qrels}, frozenset(chosen_on), note
