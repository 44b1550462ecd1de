"""Does an answer state the expected figure, in its own statements? The check behind the demo, notebook
01's closing cell and the paraphrase benchmark (benchmarks/answer_paraphrases.py).

A substring match over the whole answer passes a wrong figure over a quoted row that holds the right
one ("… is $4,449." + the row ending "Bi-Weekly: $4,106"). Here the answer is right when its statements
(:mod:`rag_lab.answer.statements`, quotes removed; numbers in words read) state every expected figure
and no other figure of the same kind that the question does not state — "$4,449 or $4,106" hedges, and
is not right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_lab.answer.statements import split_statements
from rag_lab.evaluate.facts.key_facts import claimed_text
from rag_lab.evaluate.facts.placement import digits_for_words, figures_of


@dataclass(frozen=True)
class ExpectedCheck:
    right: bool
    missing: list[str]  # expected figures the statements do not state
    others: list[str]  # figures of the expected kinds the statements state besides them
    non_answer: bool  # no statement at all (quotes only)

    @property
    def reason(self) -> str:
        if self.non_answer:
            return "non-answer: quotes only, no statement"
        if self.missing:
            return "does not state " + ", ".join(self.missing)
        return "also states " + ", ".join(self.others) if self.others else "right"


def check_expected(answer: str, expected: Sequence[str], question: str = "") -> ExpectedCheck:
    """Is ``answer`` right by its statements: each ``expected`` figure ("$4,106") stated, no other of its kind?"""
    said = split_statements(answer)
    stated = {(f.kind, f.value) for f in figures_of(claimed_text(digits_for_words(said.statements)))}
    asked = {(f.kind, f.value) for f in figures_of(question)}
    wanted = {(f.kind, f.value): text for text in expected for f in figures_of(text)}
    missing = [text for key, text in wanted.items() if key not in stated]
    kinds = {kind for kind, _ in wanted}
    others = sorted(f"{kind}:{value}" for kind, value in stated - set(wanted) - asked if kind in kinds)
    return ExpectedCheck(not missing and not others and not said.is_non_answer, missing, others, said.is_non_answer)


def states_expected(answer: str, expected: Sequence[str], question: str = "") -> bool:
    return check_expected(answer, expected, question).right
