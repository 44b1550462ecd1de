"""Grounded NLI: the judge copies the passage it relies on before it judges (issue 21 lever).

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

NO_EVIDENCE = "none"
# A passage longer than this is cut into sentences (a table row or a short paragraph stays whole).
MAX_PASSAGE_CHARS = 300
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9(\"'$])")


class GroundedVerdict(BaseModel):
    statement: str = Field(..., description="the original statement, word-by-word")
    evidence: str = Field(..., description="the one sentence or table row of the context, copied word for word, "
                                           f"that the statement's facts would come from, or \"{NO_EVIDENCE}\"")
    reason: str = Field(..., description="the statement's numbers, dates and names compared with the evidence's")
    verdict: int = Field(..., description="1 if the evidence states what the statement says, 0 otherwise")


class GroundedNLIOutput(BaseModel):
    statements: list[GroundedVerdict]


def passages(context: str) -> list[str]:
    """The context's lines, long ones cut into sentences: what ``evidence`` may quote (in order, unique)."""
    found: list[str] = []
    for line in context.splitlines():
        line = " ".join(line.split())
        parts = _SENTENCE_END.split(line) if len(line) > MAX_PASSAGE_CHARS else [line]
        found.extend(p.strip() for p in parts if p.strip())
    return list(dict.fromkeys(found))


def grounded_output_model(context: str, statements: int) -> type[BaseModel]:
    """``GroundedNLIOutput`` whose ``evidence`` is one of ``context``'s passages and whose list has one
    verdict per statement (what the constrained judge turns into its grammar)."""
    quotable = tuple(passages(context)) + (NO_EVIDENCE,)
    verdict = create_model("GroundedVerdictQuoted", __base__=GroundedVerdict,
                           evidence=(Literal[quotable], Field(..., description=GroundedVerdict.model_fields["evidence"].description)))
    return create_model("GroundedNLIOutput", statements=(conlist(verdict, min_length=statements, max_length=statements), ...))


def _example(statement: str, evidence: str, reason: str, verdict: int) -> GroundedVerdict:
    return GroundedVerdict(statement=statement, evidence=evidence, reason=reason, verdict=verdict)


_JOHN = ("John is a student at XYZ University. He is pursuing a degree in Computer Science. He is enrolled in several "
         "courses this semester, including Data Structures, Algorithms, and Database Management. John is a diligent "
         "student and spends a significant amount of time studying and completing assignments. He often stays late "
         "in the library to work on his projects.")
_MUSEUM = "Hours | Tuesday-Sunday | 9:00 a.m.-5:00 p.m.\nAdmission | Adults: $12 | Children under 12: free\nThe museum opened in 1998."


class GroundedNLIPrompt(NLIStatementPrompt):
    """RAGAS's ``NLIStatementPrompt`` with an ``evidence`` quote before each reason (see the module)."""

    design = "grounded-v1"  # part of judged scores' cache keys: bump when the prompt or rule changes
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

    async def generate(self, llm: Any, data: NLIStatementInput, *args: Any, **kwargs: Any) -> NLIStatementOutput:
        from rag_lab.evaluate.judge.constrained import ConstrainedJudge

        prompt = self
        if isinstance(llm, ConstrainedJudge):  # the grammar holds the context's passages; the prompt text does not
            prompt = self.__class__()
            prompt.output_model = grounded_output_model(data.context, len(data.statements))
        reply = await super(GroundedNLIPrompt, prompt).generate(llm, data, *args, **kwargs)
        return NLIStatementOutput(statements=[
            StatementFaithfulnessAnswer(statement=v.statement, reason=f"{v.reason} (evidence: {v.evidence})",
                                        verdict=v.verdict) for v in reply.statements])

    def _generate_output_signature(self, indent: int = 4) -> str:
        # the schema shown is the static one: the enum of passages would repeat the context in the prompt
        asked, self.output_model = self.output_model, GroundedNLIOutput
        try:
            return super()._generate_output_signature(indent)
        finally:
            self.output_model = asked


def use_grounded_nli(metric: Any) -> Any:
    """``metric`` with its NLI prompt grounded (metrics without one are returned as is)."""
    from rag_lab.evaluate.judge.per_statement import NLI_PROMPT_FIELDS

    field = NLI_PROMPT_FIELDS.get(type(metric).__name__)
    if field is not None:
        setattr(metric, field, GroundedNLIPrompt())
    return metric
