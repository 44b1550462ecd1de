"""The quality checks a synthetic question must pass, each a named rejection reason.

Measured, not assumed: every check is code over the question, its reference answer and its source
chunk, so a rejected candidate says why, and counts by reason go in the output's summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag_lab.answer.figures import figures, is_stated, stated_values
from rag_lab.evaluate.questions.kinds import QuestionReply
from rag_lab.tokenizer import DomainTokenizer

# Rejection reasons, in the order the checks run (the first failing one is the candidate's reason).
CUT_AT_LENGTH = "cut_at_length"
NOT_SELF_CONTAINED = "not_self_contained"
TOO_SHORT = "too_short"
COPIES_SOURCE = "copies_source"
TOO_LEXICAL = "too_lexical"
FIGURE_NOT_IN_SOURCE = "figure_not_in_source"
ANSWER_NOT_IN_SOURCE = "answer_not_in_source"
NEAR_DUPLICATE = "near_duplicate"
LLM_FAILED = "llm_failed"
REASONS = (LLM_FAILED, CUT_AT_LENGTH, NOT_SELF_CONTAINED, TOO_SHORT, COPIES_SOURCE, TOO_LEXICAL, FIGURE_NOT_IN_SOURCE,
           ANSWER_NOT_IN_SOURCE, NEAR_DUPLICATE)

# Words that point at a text the searcher never saw: the question is not self-contained.
_DEICTIC = re.compile(
    r"\b(?:the|this|that|these|those)\s+(?:passage|excerpt|text|document|article|section|table|chart|figure|"
    r"paragraph|page|study|paper|abstract|report|snippet|context|list)s?\b"
    r"|\b(?:above|below|aforementioned|mentioned|the following|provided information|given information)\b"
    r"|\baccording to (?:it|the (?:passage|text|document|table|author|information))\b",
    re.IGNORECASE)
MIN_QUESTION_WORDS = 5
# A run of this many tokens of the question, in order, inside its chunk is a copied span.
COPIED_SPAN_TOKENS = 8
# Share of the reference answer's content tokens its chunk must state (figures are checked apart).
ANSWER_SUPPORT = 0.6
# Token-set Jaccard at or above which two questions are the same question.
NEAR_DUPLICATE_JACCARD = 0.8
# A reply field as long as its schema allows was cut there by the constrained decoder.
def _cap(name: str) -> int:
    return next(m.max_length for m in QuestionReply.model_fields[name].metadata if getattr(m, "max_length", None))


_QUESTION_CAP, _ANSWER_CAP = _cap("question"), _cap("answer")
_YES_NO = re.compile(r"^\s*(?:yes|no)\b[\s,.;:-]*", re.IGNORECASE)

_tokenizer = DomainTokenizer()


def tokens(text: str) -> list[str]:
    """Content tokens as the sparse index reads them (stop words dropped, stems, figures normalised)."""
    return _tokenizer(text)


def lexical_overlap(question: str, source: str) -> float:
    """Share of the question's distinct content tokens that its source states (0 for an empty question)."""
    asked = set(tokens(question))
    return len(asked & set(tokens(source))) / len(asked) if asked else 0.0


def longest_copied_span(question: str, source: str) -> int:
    """The longest run of the question's words (lowercased, in order) that the source contains."""
    words = re.findall(r"\w+", question.lower())
    text = " " + " ".join(re.findall(r"\w+", source.lower())) + " "
    best = 0
    for start in range(len(words)):
        length = best + 1
        while start + length <= len(words) and f" {' '.join(words[start:start + length])} " in text:
            best = length
            length += 1
    return best


def figures_not_in(answer: str, source: str, question: str = "") -> list[str]:
    """The figures of ``answer`` that neither its source nor the question states."""
    values = stated_values(source) | stated_values(question)
    return [term.text for term in figures(answer) if not is_stated(term, values)]


def answer_support(answer: str, source: str) -> float:
    """Share of the answer's content tokens (a leading yes/no dropped) that the source states."""
    said = set(tokens(_YES_NO.sub("", answer)))
    return len(said & set(tokens(source))) / len(said) if said else 1.0


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


@dataclass(frozen=True)
class Verdict:
    reason: str | None  # None: accepted
    overlap: float
    copied_span: int


def check(question: str, answer: str, source: str, *, max_overlap: float,
          accepted: Sequence[list[str]] = ()) -> Verdict:
    """The first check ``question`` fails (or None), beside its overlap and longest copied span.
    ``accepted``: the content tokens of the questions kept so far (near-duplicates are refused)."""
    overlap, span = lexical_overlap(question, source), longest_copied_span(question, source)

    def verdict(reason: str | None) -> Verdict:
        return Verdict(reason, round(overlap, 4), span)

    if len(question) >= _QUESTION_CAP or len(answer) >= _ANSWER_CAP:  # the decoder stopped it mid-sentence
        return verdict(CUT_AT_LENGTH)
    if _DEICTIC.search(question):
        return verdict(NOT_SELF_CONTAINED)
    if len(question.split()) < MIN_QUESTION_WORDS:
        return verdict(TOO_SHORT)
    if span >= COPIED_SPAN_TOKENS:
        return verdict(COPIES_SOURCE)
    if overlap > max_overlap:
        return verdict(TOO_LEXICAL)
    if figures_not_in(answer, source, question):
        return verdict(FIGURE_NOT_IN_SOURCE)
    if answer_support(answer, source) < ANSWER_SUPPORT:
        return verdict(ANSWER_NOT_IN_SOURCE)
    own = tokens(question)
    if any(jaccard(own, other) >= NEAR_DUPLICATE_JACCARD for other in accepted):
        return verdict(NEAR_DUPLICATE)
    return verdict(None)
