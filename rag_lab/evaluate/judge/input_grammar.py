"""RAGAS prompts whose grammar is built from their input (grounded NLI, statements by sentence).

RAGAS shows the judge one output schema per prompt class. Some levers constrain more than a class
can: which passages a quote may copy, which sentences a reply must list. ``InputGrammarPrompt``
keeps the prompt text (and so the cache key) on the static schema, hands a ``ConstrainedJudge`` the
schema built from this input, and turns the reply back into the output model RAGAS scores.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class InputGrammarPrompt:
    """Mixin before a RAGAS ``PydanticPrompt`` subclass whose class ``output_model`` is the static
    schema shown in the prompt; subclasses define ``grammar_model`` and ``to_ragas``."""

    def grammar_model(self, data: Any) -> type[BaseModel]:
        """The constrained judge's output model for ``data`` (a subclass of nothing in particular:
        its JSON schema is the grammar; a ``judge_max_tokens`` attribute raises the reply's budget)."""
        raise NotImplementedError

    def to_ragas(self, reply: Any) -> BaseModel:
        """The reply as the output model of the RAGAS prompt this one replaces."""
        raise NotImplementedError

    async def generate(self, llm: Any, data: Any, *args: Any, **kwargs: Any) -> BaseModel:
        from rag_lab.evaluate.judge.constrained import ConstrainedJudge

        prompt = self
        if isinstance(llm, ConstrainedJudge):  # a copy: the grammar is this input's, the prompt's class is shared
            prompt = self.__class__()
            prompt.output_model = self.grammar_model(data)
        reply = await super(InputGrammarPrompt, prompt).generate(llm, data, *args, **kwargs)  # type: ignore[misc]
        return self.to_ragas(reply)

    def _generate_output_signature(self, indent: int = 4) -> str:
        # the schema shown is the class's static one: the input's would repeat the input in the prompt
        asked, self.output_model = self.output_model, type(self).output_model  # type: ignore[attr-defined]
        try:
            return super()._generate_output_signature(indent)  # type: ignore[misc]
        finally:
            self.output_model = asked
