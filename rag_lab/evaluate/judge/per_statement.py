"""One judge call per statement: a lever for small judges ("one claim per call").

RAGAS verifies every statement of an answer in one NLI call (``NLIStatementPrompt``: the context,
then the list of statements, answered by a list of verdicts). A 1.5B judge asked about several
statements at once tends to copy the context's wording into every verdict; asked about one, it has
one comparison to make. ``PerStatementNLIPrompt`` is RAGAS's own prompt (same instruction, examples
and output model), asked once per statement; the verdicts are joined in order, so the metric's
score is computed by RAGAS unchanged. The context comes before the statement in the rendered
prompt, so the local model's prompt cache serves the shared prefix of consecutive calls.
"""

from __future__ import annotations

from typing import Any

from ragas.metrics._faithfulness import NLIStatementInput, NLIStatementOutput, NLIStatementPrompt

# Where each judged metric keeps its NLI prompt (RAGAS 0.4 attribute names).
NLI_PROMPT_FIELDS = {"Faithfulness": "nli_statements_prompt", "FactualCorrectness": "nli_prompt"}


class PerStatementNLIPrompt(NLIStatementPrompt):
    """``NLIStatementPrompt`` asked once per statement; returns every verdict, in order."""

    async def generate(self, llm: Any, data: NLIStatementInput, *args: Any, **kwargs: Any) -> NLIStatementOutput:
        verdicts = []
        for statement in data.statements:
            one = NLIStatementInput(context=data.context, statements=[statement])
            reply = await super().generate(llm, one, *args, **kwargs)
            verdicts.extend(reply.statements[:1])  # one statement asked: one verdict kept
        return NLIStatementOutput(statements=verdicts)


def use_nli_prompt(metric: Any, prompt: Any) -> Any:
    """``metric`` with ``prompt`` as its NLI prompt (metrics without one are returned as is)."""
    field = NLI_PROMPT_FIELDS.get(type(metric).__name__)
    if field is not None:
        setattr(metric, field, prompt)
    return metric


def use_per_statement_nli(metric: Any) -> Any:
    """``metric`` with its NLI prompt asked per statement."""
    return use_nli_prompt(metric, PerStatementNLIPrompt())
