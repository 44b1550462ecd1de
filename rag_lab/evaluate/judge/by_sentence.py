"""Statements by sentence: every sentence of the answer gets its own statements.

Faithfulness first splits the answer into statements (RAGAS's ``StatementGeneratorPrompt``), then
verifies them; a sentence the splitter leaves out is never verified. On the judge validation set's
dev questions the 1.5B splitter dropped the one unsupported sentence of 2 of 10 "added sentence"
answers (so the judge could not catch it, whatever its verdicts). ``SentenceStatementPrompt`` asks
the same task sentence by sentence: its reply lists each sentence of the answer, in order, with the
statements it breaks into. For a schema-constrained judge the grammar fixes the sentences (each is
copied, in order, none skipped) and asks at least one statement for each; RAGAS gets the statements,
flattened in order, and verifies and scores them unchanged. Other judges get the same prompt, free.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, conlist, create_model
from ragas.metrics._faithfulness import (StatementGeneratorInput, StatementGeneratorOutput,
                                         StatementGeneratorPrompt)

from rag_lab.evaluate.judge.input_grammar import InputGrammarPrompt

# A sentence rarely holds more facts than this; the bound keeps a reply from repeating a statement
# until its budget runs out (the failure ``MAX_LIST_ITEMS`` ends for the flat lists).
MAX_STATEMENTS_PER_SENTENCE = 6
MAX_STATEMENT_CHARS = 300
# Tokens a reply may take per sentence (its copy, its statements, JSON).
TOKENS_PER_SENTENCE = 300
# At most this many sentences are anchored (a longer answer is split by RAGAS's own prompt).
MAX_SENTENCES = 24
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'$\[])")
# A piece ending so is not a sentence: an abbreviation ("i.e.", "U.S.") or a list number ("1.", "a)").
_NOT_AN_END = re.compile(r"(?:\b(?:[a-zA-Z]\.){2,}|\b(?:e\.g|etc|vs|Dr|Mr|Mrs|Ms|St|Jan|Feb|Aug|Sept?|Oct|Nov|Dec)\.|"
                         r"^\(?[0-9a-zA-Z]{1,3}[.)])$")


class SentenceStatements(BaseModel):
    sentence: str = Field(..., description="one sentence of the answer, copied")
    statements: list[str] = Field(..., description="the fully understandable statements of that sentence, "
                                                   "without pronouns")


class StatementsBySentence(BaseModel):
    sentences: list[SentenceStatements]


def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences in order: each line (a list item, a heading) apart, the prose of a line
    split after ".", "!" or "?" before a capital, a digit, "$" or a bracket (not inside "4.26%", not
    after "i.e." or a list number)."""
    found: list[str] = []
    for line in answer.splitlines():
        line = " ".join(line.split())
        pieces: list[str] = []
        for piece in _SENTENCE_END.split(line):
            if pieces and _NOT_AN_END.search(pieces[-1]):
                pieces[-1] += " " + piece
            else:
                pieces.append(piece)
        found.extend(p.strip() for p in pieces if p.strip())
    return found


def anchored_output_model(sentences: list[str]) -> type[BaseModel]:
    """``StatementsBySentence`` as the constrained judge's grammar: exactly ``sentences``, in order
    (a tuple: item i copies sentence i), each with 1 … ``MAX_STATEMENTS_PER_SENTENCE`` statements."""
    statement = Annotated[str, StringConstraints(max_length=MAX_STATEMENT_CHARS)]
    statements = (conlist(statement, min_length=1, max_length=MAX_STATEMENTS_PER_SENTENCE),
                  Field(..., description=SentenceStatements.model_fields["statements"].description))
    items = tuple(create_model(f"Sentence{i}", sentence=(Literal[sentence], ...), statements=statements)
                  for i, sentence in enumerate(sentences, start=1))
    model = create_model("StatementsBySentence", sentences=(tuple[items], ...))  # type: ignore[valid-type]
    model.judge_max_tokens = TOKENS_PER_SENTENCE * len(sentences)
    return model


_EINSTEIN = StatementGeneratorPrompt.examples[0]


class SentenceStatementPrompt(InputGrammarPrompt, StatementGeneratorPrompt):
    """RAGAS's ``StatementGeneratorPrompt`` answered sentence by sentence (see the module)."""

    # part of judged scores' cache keys (with the prompt's text): bump when the sentence rule changes
    design = "by-sentence-v1"
    instruction = (StatementGeneratorPrompt.instruction + " List every sentence of the answer, in order, each with "
                   "the statements it breaks into: no sentence may be left out.")
    output_model = StatementsBySentence
    examples = [
        (_EINSTEIN[0], StatementsBySentence(sentences=[
            SentenceStatements(sentence="He was a German-born theoretical physicist, widely acknowledged to be one of "
                                        "the greatest and most influential physicists of all time.",
                               statements=_EINSTEIN[1].statements[:2]),
            SentenceStatements(sentence="He was best known for developing the theory of relativity, he also made "
                                        "important contributions to the development of the theory of quantum "
                                        "mechanics.", statements=_EINSTEIN[1].statements[2:])])),
    ]

    async def generate(self, llm: Any, data: StatementGeneratorInput, *args: Any,
                       **kwargs: Any) -> StatementGeneratorOutput:
        if not 0 < len(answer_sentences(data.answer)) <= MAX_SENTENCES:
            return await StatementGeneratorPrompt().generate(llm, data, *args, **kwargs)
        return await super().generate(llm, data, *args, **kwargs)

    def grammar_model(self, data: StatementGeneratorInput) -> type[BaseModel]:
        return anchored_output_model(answer_sentences(data.answer))

    def to_ragas(self, reply: Any) -> StatementGeneratorOutput:
        return StatementGeneratorOutput(statements=[s for item in reply.sentences for s in item.statements])


def use_statements_by_sentence(metric: Any) -> Any:
    """``metric`` (faithfulness) with its statements split sentence by sentence; other metrics as is."""
    if hasattr(metric, "statement_generator_prompt"):
        metric.statement_generator_prompt = SentenceStatementPrompt()
    return metric
