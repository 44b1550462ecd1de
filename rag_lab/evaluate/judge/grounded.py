"""Grounded NLI: the judge copies the passage it relies on before it judges.

Asked whether "the limit is $115,052" follows from a chunk that says $92,041, the 1.5B judge wrote
"the context provides the limit, which is $115,052" and a verdict of 1: its reason quoted the
statement, not the context. ``GroundedNLIPrompt`` is RAGAS's NLI prompt (same task, same verdicts,
scored by RAGAS) with one field before the reason, ``evidence``: the sentence or table row of the
context the statement's facts would come from. For a schema-constrained judge the field is an enum
of the context's own passages (plus "none"), so the quote cannot be invented: the number the judge
then compares with is the context's. Other judges get the same prompt with a free-text field.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, conlist, create_model
from ragas.metrics._faithfulness import (NLIStatementInput, NLIStatementOutput, NLIStatementPrompt,
                                         StatementFaithfulnessAnswer)

from rag_lab.evaluate.judge.input_grammar import InputGrammarPrompt

NO_EVIDENCE = "none"
# A paragraph whose sentences run longer than this is a table laid out as text (numbers without
# sentence ends): it is quoted line by line. No passage is longer than MAX_QUOTE_CHARS (a prefix of
# a long line is still a verbatim quote), nor a reason longer than MAX_REASON_CHARS: together they
# bound a reply (a 2,000-character "sentence" and a run-on reason each cut a reply at its budget).
MAX_SENTENCE_CHARS = 300
MAX_QUOTE_CHARS = 400
MAX_REASON_CHARS = 300
# Tokens a grounded reply may take per statement (statement, quote, reason, verdict and JSON).
TOKENS_PER_STATEMENT = 250
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9(\"'$])")
# A line that starts a list item (PDF bullets, dashes, "1." / "a)") starts a new passage.
_ITEM_START = re.compile(r"^(?:[•➢◦▪●○■□►\-*–]|\(?[0-9a-zA-Z]{1,3}[.)])\s")


class GroundedVerdict(BaseModel):
    statement: str = Field(..., description="the original statement, word-by-word")
    evidence: str = Field(..., description="the one sentence or table row of the context, copied word for word, "
                                           f"that the statement's facts would come from, or \"{NO_EVIDENCE}\"")
    reason: str = Field(..., description="the statement's numbers, dates and names compared with the evidence's")
    verdict: int = Field(..., description="1 if the evidence states what the statement says, 0 otherwise")


class GroundedNLIOutput(BaseModel):
    statements: list[GroundedVerdict]


def passages(context: str) -> list[str]:
    """What ``evidence`` may quote, in order and unique: each table row (a line with " | ") whole, and
    the sentences of the prose around them, with the line breaks of the PDF's layout undone (a
    sentence wrapped over three lines is one passage; a list item starts a new one)."""
    found: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        sentences = [s.strip() for s in _SENTENCE_END.split(" ".join(paragraph)) if s.strip()]
        found.extend(paragraph if any(len(s) > MAX_SENTENCE_CHARS for s in sentences) else sentences)
        paragraph.clear()

    for line in context.splitlines():
        line = " ".join(line.split())
        if not line or " | " in line or _ITEM_START.match(line):
            flush()
        if " | " in line:
            found.append(line)
        elif line:
            paragraph.append(line)
    flush()
    return list(dict.fromkeys(p[:MAX_QUOTE_CHARS].strip() for p in found))


def grounded_output_model(context: str, statements: list[str]) -> type[BaseModel]:
    """``GroundedNLIOutput`` as the constrained judge's grammar: one verdict per statement, each naming
    one of ``statements``, quoting one of ``context``'s passages, with a bounded reason; its
    ``judge_max_tokens`` is the reply's token budget (it grows with the statements)."""
    quotable = tuple(passages(context)) + (NO_EVIDENCE,)
    fields = GroundedVerdict.model_fields
    verdict = create_model(
        "GroundedVerdictQuoted", __base__=GroundedVerdict,
        statement=(Literal[tuple(dict.fromkeys(statements))], Field(..., description=fields["statement"].description)),
        evidence=(Literal[quotable], Field(..., description=fields["evidence"].description)),
        reason=(str, Field(..., max_length=MAX_REASON_CHARS, description=fields["reason"].description)))
    model = create_model("GroundedNLIOutput",
                         statements=(conlist(verdict, min_length=len(statements), max_length=len(statements)), ...))
    model.judge_max_tokens = TOKENS_PER_STATEMENT * len(statements)
    return model


def _example(statement: str, evidence: str, reason: str, verdict: int) -> GroundedVerdict:
    return GroundedVerdict(statement=statement, evidence=evidence, reason=reason, verdict=verdict)


_JOHN = ("John is a student at XYZ University. He is pursuing a degree in Computer Science. He is enrolled in several "
         "courses this semester, including Data Structures, Algorithms, and Database Management. John is a diligent "
         "student and spends a significant amount of time studying and completing assignments. He often stays late "
         "in the library to work on his projects.")
_MUSEUM = "Hours | Tuesday-Sunday | 9:00 a.m.-5:00 p.m.\nAdmission | Adults: $12 | Children under 12: free\nThe museum opened in 1998."


class GroundedNLIPrompt(InputGrammarPrompt, NLIStatementPrompt):
    """RAGAS's ``NLIStatementPrompt`` with an ``evidence`` quote before each reason (see the module)."""

    # part of judged scores' cache keys: bump when the prompt or the passage rule changes
    # (v1 quoted lines: a PDF's wrapped prose gave line fragments, and the judge quoted the first)
    # v2 joined a table laid out as text into one 2,000-character passage; v3 bounds quotes and reasons
    design = "grounded-v3"
    instruction = (NLIStatementPrompt.instruction + " For each statement, first copy into evidence the one sentence "
                   "or table row of the context that the statement's facts would come from (\"none\" if no passage "
                   "does), then compare every number, date, year and name of the statement with that evidence: the "
                   "verdict is 1 only if the evidence states the same.")
    output_model = GroundedNLIOutput
    examples = [
        (NLIStatementInput(context=_JOHN, statements=["John is majoring in Biology.", "John is a dedicated student.",
                                                      "John has a part-time job."]),
         GroundedNLIOutput(statements=[
             _example("John is majoring in Biology.", "He is pursuing a degree in Computer Science.",
                      "The evidence names Computer Science, not Biology.", 0),
             _example("John is a dedicated student.", "John is a diligent student and spends a significant amount of "
                      "time studying and completing assignments.", "Diligent and studying a lot means dedicated.", 1),
             _example("John has a part-time job.", NO_EVIDENCE, "No passage mentions a job.", 0)])),
        (NLIStatementInput(context=_MUSEUM, statements=["Adult admission costs $15.", "The museum opened in 1998.",
                                                        "The museum is open on Mondays."]),
         GroundedNLIOutput(statements=[
             _example("Adult admission costs $15.", "Admission | Adults: $12 | Children under 12: free",
                      "The evidence says $12 for adults; the statement says $15.", 0),
             _example("The museum opened in 1998.", "The museum opened in 1998.", "Same year, 1998.", 1),
             _example("The museum is open on Mondays.", "Hours | Tuesday-Sunday | 9:00 a.m.-5:00 p.m.",
                      "The evidence says Tuesday to Sunday, which leaves out Monday.", 0)])),
    ]

    def grammar_model(self, data: NLIStatementInput) -> type[BaseModel]:
        return grounded_output_model(data.context, data.statements)

    def to_ragas(self, reply: Any) -> NLIStatementOutput:
        return NLIStatementOutput(statements=[
            StatementFaithfulnessAnswer(statement=v.statement, reason=f"{v.reason} (evidence: {v.evidence})",
                                        verdict=v.verdict) for v in reply.statements])


def use_grounded_nli(metric: Any) -> Any:
    """``metric`` with its NLI prompt grounded."""
    from rag_lab.evaluate.judge.per_statement import use_nli_prompt

    return use_nli_prompt(metric, GroundedNLIPrompt())
