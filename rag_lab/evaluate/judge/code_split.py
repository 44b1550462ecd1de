"""Statements without an LLM: sentences and clauses split by code.

RAGAS splits an answer into statements (faithfulness) or claims (factual correctness) with an LLM
call; the 1.5B splitter sometimes drops the one invented sentence, which then is never verified, and
the call is a generated reply (tens of seconds on 2 cores). ``CodeStatementPrompt`` and
``CodeClaimPrompt`` stand in for those prompts: every sentence of the text
(:func:`by_sentence.answer_sentences`), a sentence with ";" cut into its clauses, is one statement.
No model call, nothing dropped but what claims nothing: a refusal's sentence or clause ("I couldn't
find the monthly limit, but the bi-weekly one is $4,106": only the second clause is a statement;
:func:`rag_lab.evaluate.facts.key_facts.claimed_text`). A sentence keeps its pronouns (the verdict's
premise is the evidence, not the answer, so "It" stays vague: a cost of this lever).
"""

from __future__ import annotations

import re
from typing import Any

from ragas.metrics._factual_correctness import ClaimDecompositionOutput, ClaimDecompositionPrompt
from ragas.metrics._faithfulness import StatementGeneratorOutput, StatementGeneratorPrompt

from rag_lab.evaluate.facts.key_facts import claimed_text, is_refusal, strip_citations
from rag_lab.evaluate.judge.by_sentence import answer_sentences
from rag_lab.evaluate.judge.versions import stamp, version_of

_CLAUSE_END = re.compile(r";\s+")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?])")
# A piece shorter than this (a heading "Eligibility:", a list marker) is no statement of its own.
MIN_STATEMENT_CHARS = 12


def claims_of(sentence: str) -> list[str]:
    """A sentence's clauses that claim something, without citation markers ("[Doc 1]" is no claim,
    and the 1.5B judge reads "$3,972 [Doc 1]" as less supported than "$3,972"): the sentence's
    clauses, or for a refusal its other clauses (none for a pure refusal)."""
    clauses = (_CLAUSE_END.split(sentence) if not is_refusal(sentence)
               else claimed_text(sentence).split("…"))
    return [_SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(strip_citations(c).split())) for c in clauses]


def split_statements(text: str) -> list[str]:
    """The text's sentences, each cut at ";" into clauses, refusals left out (:func:`claims_of`);
    pieces of fewer than ``MIN_STATEMENT_CHARS`` characters are joined to the next one; unique, in order."""
    found: list[str] = []
    carry = ""
    for sentence in answer_sentences(text):
        for clause in claims_of(sentence):
            clause = (carry + " " + clause).strip() if carry else clause.strip()
            if len(clause) < MIN_STATEMENT_CHARS:
                carry = clause
                continue
            carry = ""
            found.append(clause)
    if carry:
        found.append(carry)
    return list(dict.fromkeys(found))


class CodeStatementPrompt(StatementGeneratorPrompt):
    """Faithfulness's statements by code (no LLM call)."""

    design = version_of("statements")

    async def generate(self, llm: Any, data: Any, *args: Any, **kwargs: Any) -> StatementGeneratorOutput:
        return StatementGeneratorOutput(statements=split_statements(data.answer))


class CodeClaimPrompt(ClaimDecompositionPrompt):
    """Factual correctness's claims by code (no LLM call)."""

    design = version_of("statements")

    async def generate(self, llm: Any, data: Any, *args: Any, **kwargs: Any) -> ClaimDecompositionOutput:
        return ClaimDecompositionOutput(claims=split_statements(data.response))


def use_code_statements(metric: Any) -> Any:
    """``metric`` with statements (faithfulness) or claims (factual correctness) split by code."""
    if hasattr(metric, "statement_generator_prompt"):
        metric.statement_generator_prompt = CodeStatementPrompt()
    if hasattr(metric, "claim_decomposition_prompt"):
        metric.claim_decomposition_prompt = CodeClaimPrompt()
    return stamp(metric, "statements")
