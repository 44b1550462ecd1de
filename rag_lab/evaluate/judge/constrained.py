"""A RAGAS judge whose every call is constrained to the JSON schema of the prompt's output model.

RAGAS 0.4's ``PydanticPrompt.generate`` hands an ``InstructorBaseRagasLLM`` the prompt text *and*
its pydantic ``output_model`` (its structured-output path). ``ConstrainedJudge`` is such an LLM on
top of any LlamaIndex LLM that takes an OpenAI-style ``response_format`` JSON schema (the local
llama.cpp model turns it into a grammar): the reply is JSON of the right shape by construction, so
the free-text and invalid-JSON failures of a small local judge cannot happen. What still can (a
reply cut at the token budget, a context overflow, a provider error) is retried once and then
raised as ``JudgeCallError`` with its reason, which the scorer records per metric and counts.
Once the scorer's deadline for the sample (``call_deadline``) has passed, no call is started and
no retry made: the scorer stopped waiting, so the work stops too (a local call already running
cannot be interrupted, but it is the last one).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before ragas is imported: no analytics calls
from ragas.llms.base import InstructorBaseRagasLLM  # noqa: E402

T = TypeVar("T", bound=BaseModel)

# Statement lists and verdict lists of a short RAG answer fit well within this (compact JSON).
JUDGE_MAX_TOKENS = 1024
RETRY_TEMPERATURE = 0.3
# Part of the judge's cache identity (with the budget and retry settings, see ``ConstrainedJudge.design``):
# bump it when how the judge is asked changes its scores.
# v3: a string repeated in a list of the reply is kept once (the 1.5B claim splitter can write one claim
# 24 times: RAGAS would then verify and count it 24 times, and a judgment took 10 minutes)
# v4: enum and const strings with a double quote asked with a stand-in (llguidance cut them at an escaped
# quote: a grounded quote of such a passage, or a verdict naming such a statement, failed to parse)
JUDGE_DESIGN = "constrained-v4"
# At most this many statements, claims or verdicts per reply: a short RAG answer has far fewer, and the
# bound ends the one failure seen under the grammar (the 1.5B claim splitter repeating a claim until
# the token budget ran out).
MAX_LIST_ITEMS = 24
# The rule ``judge_schema`` adds to RAGAS's output schemas: in the design, so changing it misses the cache.
SCHEMA_RULE = f"top-level arrays minItems=1, maxItems={MAX_LIST_ITEMS}; repeated strings dropped"

# ``time.monotonic()`` after which no judge call starts (set per sample by the scorer; None: no deadline).
call_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("judge_call_deadline", default=None)


class JudgeCallError(RuntimeError):
    """A judge call that failed twice (first try and one retry); the message says why."""


@dataclass
class JudgeStats:
    """What one judge's calls cost and how they ended (each judged metric builds its own judge)."""

    calls: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "retries": self.retries, "failures": self.failures,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "seconds": round(self.seconds, 3)}


def judge_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema with every top-level list non-empty and bounded: an empty statement or
    verdict list is the one reply that still parses and makes RAGAS return NaN (seen: faithfulness on
    a long answer), and an unbounded one can repeat an item until the budget cuts it. The judged
    inputs are never empty, so neither is a right reply. Bounds the model sets itself are kept."""
    schema = model.model_json_schema()
    for prop in (schema.get("properties") or {}).values():
        if prop.get("type") == "array":
            prop.setdefault("minItems", 1)
            prop.setdefault("maxItems", MAX_LIST_ITEMS)
    return schema


def response_format(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAI-style ``response_format`` for ``model``'s (non-empty) JSON schema."""
    return {"type": "json_schema", "json_schema": {"name": model.__name__, "schema": judge_schema(model), "strict": True}}


def _usage(response: Any) -> tuple[int, int]:
    raw = getattr(response, "raw", None) or {}
    usage = raw.get("usage") if isinstance(raw, dict) else getattr(raw, "usage", None)
    if isinstance(usage, dict):
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0)


def _without_repeats(reply: T) -> T:
    """``reply`` with every top-level list of strings (statements, claims) kept once per string, in
    order: a repeated statement adds no fact, but RAGAS would verify it again and count it again.
    Lists of objects (verdicts, one per statement asked) are left alone."""
    for name, value in reply:
        if isinstance(value, list) and all(isinstance(item, str) for item in value) and len(set(value)) < len(value):
            setattr(reply, name, list(dict.fromkeys(value)))
    return reply


# Replies kept per judge: greedy decoding gives a repeated prompt the same reply, and RAGAS repeats
# some (factual correctness splits the same reference into claims for every answer it is given).
REPLIES_KEPT = 1024


class ConstrainedJudge(InstructorBaseRagasLLM):
    """``agenerate(prompt, response_model)`` → a validated ``response_model``, or ``JudgeCallError``.

    ``llm`` is a LlamaIndex LLM whose ``complete`` accepts ``response_format`` (see
    ``LocalLLM.supports_constrained_output``). ``attempts`` = first try + retries.
    """

    is_async = True

    def __init__(self, llm: Any, *, max_tokens: int = JUDGE_MAX_TOKENS, attempts: int = 2) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.attempts = attempts
        self.stats = JudgeStats()
        self._lock = threading.Lock()
        self._replies: dict[tuple[str, str], BaseModel] = {}
        # When a list: every reply (output model name and content) is appended, e.g. for a benchmark
        # that keeps the judge's quotes and reasons beside its score.
        self.transcript: list[dict[str, Any]] | None = None

    def _note(self, response_model: type[BaseModel], reply: BaseModel) -> None:
        if self.transcript is not None:
            self.transcript.append({"output": response_model.__name__, "reply": reply.model_dump(mode="json")})

    @property
    def design(self) -> str:
        """How this judge asks (part of judged scores' cache keys): what changes it may change scores."""
        return (f"{JUDGE_DESIGN}; {SCHEMA_RULE}; max_tokens={self.max_tokens}; attempts={self.attempts}; "
                f"retry: 2x budget, temperature {RETRY_TEMPERATURE}")

    def _once(self, prompt: str, response_model: type[T], retry: bool) -> T:
        # A greedy retry would repeat the same reply: the retry gets twice the budget (the usual
        # failure under a grammar is a reply cut at the budget) and a little temperature.
        # an output model may ask for a larger budget (a grounded reply grows with its statements)
        budget = max(self.max_tokens, getattr(response_model, "judge_max_tokens", 0)) * (2 if retry else 1)
        options = {"max_tokens": budget} | ({"temperature": RETRY_TEMPERATURE} if retry else {})
        started = time.perf_counter()
        try:
            response = self.llm.complete(prompt, response_format=response_format(response_model), **options)
        finally:
            with self._lock:
                self.stats.calls += 1
                self.stats.seconds += time.perf_counter() - started
        prompt_tokens, completion_tokens = _usage(response)
        with self._lock:
            self.stats.prompt_tokens += prompt_tokens
            self.stats.completion_tokens += completion_tokens
        text = response.text or ""
        try:
            reply = response_model.model_validate_json(text)
        except ValidationError as exc:
            cut = f" (cut at the budget of {budget} tokens)" if completion_tokens >= budget else ""
            raise ValueError(f"reply is not a valid {response_model.__name__}{cut}: "
                             f"{exc.errors()[0].get('msg', exc)}; reply starts {text[:120]!r}") from None
        empty = [name for name, value in reply if isinstance(value, list) and not value]
        if empty:  # the schema forbids it; an LLM that ignores schemas may still send one
            raise ValueError(f"reply is not a valid {response_model.__name__}: List should have at least 1 item "
                             f"({', '.join(empty)})")
        return _without_repeats(reply)

    def generate(self, prompt: str, response_model: type[T]) -> T:
        key = (response_model.__name__, prompt)
        if (hit := self._replies.get(key)) is not None and isinstance(hit, response_model):
            self._note(response_model, hit)
            return hit.model_copy(deep=True)
        reasons: list[str] = []
        deadline = call_deadline.get()
        tries = 0
        for attempt in range(self.attempts):
            if deadline is not None and time.monotonic() >= deadline:
                reasons.append(f"{'not asked' if attempt == 0 else 'no retry'}: the sample's judge deadline had passed")
                break
            if attempt > 0:
                with self._lock:
                    self.stats.retries += 1
            tries += 1
            try:
                reply = self._once(prompt, response_model, retry=attempt > 0)
                if len(self._replies) >= REPLIES_KEPT:
                    self._replies.clear()
                self._replies[key] = reply.model_copy(deep=True)
                self._note(response_model, reply)
                return reply
            except Exception as exc:  # noqa: BLE001 - retried once, then raised with every reason
                reasons.append(f"{type(exc).__name__}: {exc}"[:400])
        reason = f"judge call for {response_model.__name__} failed {tries}x: " + " | ".join(reasons)
        with self._lock:
            self.stats.failures += 1
            self.stats.reasons.append(reason)
        raise JudgeCallError(reason)

    async def agenerate(self, prompt: str, response_model: type[T]) -> T:
        return await asyncio.to_thread(self.generate, prompt, response_model)
