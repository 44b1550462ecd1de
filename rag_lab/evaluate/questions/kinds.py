"""Question kinds and the one prompt that asks for a question of a kind, with its version.

A kind is what a corpus user asks of a passage: a figure a table row gives, a condition or rule, a
yes/no, a definition, or (where users write claims, as SciFact's do) a claim to verify. The reply is
JSON of :class:`QuestionReply`'s shape (constrained decoding on the local model).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pydantic import BaseModel, Field

# Part of every cached reply's key: bump it when the prompt, the window or the reply's shape changes.
PROMPT_VERSION = "synth-v2"
# Words of the chunk shown to the model: a window, not the whole chunk (prompt reading dominates a
# local call's time; the question is about the window, and its source is still the chunk).
WINDOW_WORDS = 180
REPLY_MAX_TOKENS = 96


@dataclass(frozen=True)
class QuestionKind:
    name: str
    ask: str  # what to write, in the prompt's words
    needs_figure: bool = False  # only for a passage that states a figure


KINDS: dict[str, QuestionKind] = {k.name: k for k in (
    QuestionKind("figure", "a question whose answer is one number, amount, percentage or date that the passage "
                           "gives (for a table row, name the row and what the column measures)", needs_figure=True),
    QuestionKind("rule", "a question about a condition, rule or requirement the passage states "
                         "(who must do what, when, or what happens if)"),
    QuestionKind("yes_no", "a yes/no question the passage answers; the answer starts with Yes or No and says why"),
    QuestionKind("definition", "a question asking what a program, term or measure named in the passage is or does"),
    QuestionKind("claim", "one factual claim, stated as a finding in one sentence (not a question), that the passage "
                          "supports; the answer is the passage's supporting fact in a few words"),
)}
QUESTION_KINDS = ("figure", "rule", "yes_no", "definition")
CLAIM_KINDS = ("claim",)


class QuestionReply(BaseModel):
    """What the model writes: the question (or claim) and its reference answer."""

    question: str = Field(min_length=8, max_length=160)
    answer: str = Field(min_length=1, max_length=100)


def default_kinds(human_questions: list[str]) -> tuple[str, ...]:
    """The kinds that resemble the corpus's users: claims where most human queries are statements
    (no question mark, as SciFact's), questions otherwise (and for a corpus with no human questions)."""
    if human_questions and sum(not q.rstrip().endswith("?") for q in human_questions) > len(human_questions) / 2:
        return CLAIM_KINDS
    return QUESTION_KINDS


def window(text: str, rng: random.Random, kind: QuestionKind) -> str:
    """Up to ``WINDOW_WORDS`` words of ``text`` on line boundaries; for a figure kind, lines around one
    that states a figure."""
    from rag_lab.answer.figures import figures

    lines = [line for line in text.splitlines() if line.strip()] or [text]
    anchor = 0
    if kind.needs_figure:
        with_figures = [i for i, line in enumerate(lines) if figures(line)]
        anchor = rng.choice(with_figures) if with_figures else 0
    elif len(text.split()) > WINDOW_WORDS:
        anchor = rng.randrange(len(lines))
    start = anchor
    while start > 0 and len(" ".join(lines[start - 1:anchor + 1]).split()) <= WINDOW_WORDS // 3:
        start -= 1  # the lines before the anchor name what its row or sentence is about
    kept, words = [], 0
    for line in lines[start:]:
        n = len(line.split())
        if kept and words + n > WINDOW_WORDS:
            break
        kept.append(line if n <= WINDOW_WORDS else " ".join(line.split()[:WINDOW_WORDS]))
        words += n
    return "\n".join(kept)


def choose_kind(kinds: tuple[str, ...], text: str, rng: random.Random) -> QuestionKind:
    """A kind for this chunk, seeded: a figure kind only for a chunk that states a figure."""
    from rag_lab.answer.figures import figures

    usable = [KINDS[k] for k in kinds if not KINDS[k].needs_figure or figures(text)]
    return rng.choice(usable or [KINDS[k] for k in kinds if not KINDS[k].needs_figure] or [KINDS["definition"]])


def prompt(kind: QuestionKind, passage: str, title: str) -> str:
    """The prompt for one question of ``kind`` about ``passage`` (from the document ``title``)."""
    what = "claim" if kind.name == "claim" else "question"
    return (
        f"You write test {what}s for a search engine over a collection of documents.\n"
        f"Read this passage from the document \"{title}\":\n\"\"\"\n{passage}\n\"\"\"\n\n"
        f"Write {kind.ask}.\n"
        f"Rules:\n"
        f"- The {what} must make sense to someone who has never seen the passage: name the program, place, "
        f"group, year or subject it is about. Never write \"the passage\", \"this document\", \"the text\", "
        f"\"the table\", \"above\" or \"mentioned\". Bad: \"How many sessions were held?\" Good: \"How many "
        f"strategic planning sessions did <organisation> hold in <year>?\"\n"
        f"- Use your own words: do not copy a sentence of the passage.\n"
        f"- The answer must be stated in the passage, in at most 12 words.\n"
        f"Reply with JSON: {{\"question\": \"...\", \"answer\": \"...\"}}"
    )
