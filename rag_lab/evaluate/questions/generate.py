"""``synth``: questions made from a dataset's chunks by an LLM, checked, written as ``qa.jsonl`` lines.

A long job one can leave running: every reply is cached per (chunk, kind, model, prompt version) as
soon as it arrives (:class:`rag_lab.models.llm.disk_cache.DiskCache`, a commit per entry), so a crash,
Ctrl-C or a provider failing half-way loses nothing — the questions made so far are written, and the
next run re-reads the cached replies (no LLM call) and carries on. The checks (:mod:`.checks`) run on
every run, cached replies included: changing a check costs no call.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.errors import ProviderError
from rag_lab.models.llm.disk_cache import DiskCache, cache_key
from rag_lab.progress import progress_bar, progress_note
from rag_lab.evaluate.questions.calibration import overlap_bound
from rag_lab.evaluate.questions.checks import LLM_FAILED, check, tokens
from rag_lab.evaluate.questions.kinds import PROMPT_VERSION, REPLY_MAX_TOKENS, QuestionReply, choose_kind, prompt, window
from rag_lab.evaluate.questions.records import SynthOutcome, question_record
from rag_lab.evaluate.questions.sampling import SourceChunk


@dataclass
class Candidate:
    """One chunk's ask: its kind, the passage shown and the prompt (the same for a chunk on every run)."""

    chunk: SourceChunk
    kind: str
    passage: str
    text: str

    def key(self, model: str) -> str:
        return cache_key("synth", model=model, prompt_version=PROMPT_VERSION,
                         inputs={"chunk": self.chunk.sha256, "kind": self.kind, "prompt": self.text})


def candidate(chunk: SourceChunk, kinds: tuple[str, ...]) -> Candidate:
    # seeded by the chunk, not the run's seed: a chunk asked again gets the same kind and window (a cache hit)
    rng = random.Random(f"{chunk.sha256}:{','.join(kinds)}")
    kind = choose_kind(kinds, chunk.text, rng)
    passage = window(chunk.text, rng, kind)
    return Candidate(chunk, kind.name, passage, prompt(kind, passage, chunk.title))


def response_format() -> dict[str, Any]:
    """The OpenAI-style ``response_format`` of a reply (the local model decodes under its grammar)."""
    return {"type": "json_schema",
            "json_schema": {"name": "QuestionReply", "schema": QuestionReply.model_json_schema(), "strict": True}}


def ask(llm: Any, text: str, attempts: int = 2) -> dict[str, Any]:
    """One constrained call: the reply's fields and what it cost. A reply that does not parse is asked
    again once with a little temperature, then is ``{"error": ...}``; a provider failure is raised."""
    errors, seconds, used = [], 0.0, (0, 0)
    for attempt in range(attempts):
        options = {"max_tokens": REPLY_MAX_TOKENS} | ({"temperature": 0.3} if attempt else {})
        started = time.perf_counter()
        response = llm.complete(text, response_format=response_format(), **options)
        seconds += time.perf_counter() - started
        used = tuple(a + b for a, b in zip(used, _usage(response)))
        try:
            reply = QuestionReply.model_validate_json(response.text or "")
        except ValueError as exc:
            errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            continue
        return {"question": " ".join(reply.question.split()), "answer": " ".join(reply.answer.split()),
                "seconds": round(seconds, 2), "prompt_tokens": used[0], "completion_tokens": used[1]}
    return {"error": " | ".join(errors), "seconds": round(seconds, 2), "prompt_tokens": used[0],
            "completion_tokens": used[1]}


def _usage(response: Any) -> tuple[int, int]:
    from rag_lab.models.llm.usage import usage_from_response

    counts = usage_from_response(response)
    return (counts[0], counts[1]) if counts else (0, 0)


@dataclass
class SynthRun:
    """The loop's state: accepted records, rejections by reason, what the calls cost."""

    n: int
    max_overlap: float
    records: list[dict[str, Any]] = field(default_factory=list)
    rejected: Counter = field(default_factory=Counter)
    overlaps: list[float] = field(default_factory=list)  # every checked candidate's
    kinds_asked: Counter = field(default_factory=Counter)
    calls: int = 0
    cached: int = 0
    seconds: float = 0.0
    cached_seconds: float = 0.0  # what the cached replies took when they were made
    accepted_tokens: list[list[str]] = field(default_factory=list)

    def take(self, cand: Candidate, reply: dict[str, Any], generator: str) -> bool:
        self.kinds_asked[cand.kind] += 1
        if "error" in reply:
            self.rejected[LLM_FAILED] += 1
            return False
        verdict = check(reply["question"], reply["answer"], cand.chunk.text, max_overlap=self.max_overlap,
                        accepted=self.accepted_tokens)
        self.overlaps.append(verdict.overlap)
        if verdict.reason is not None:
            self.rejected[verdict.reason] += 1
            return False
        self.accepted_tokens.append(tokens(reply["question"]))
        self.records.append(question_record(cand.chunk, reply, kind=cand.kind, generator=generator,
                                            overlap=verdict.overlap))
        return True


def generate(dataset: Dataset, settings: Settings, chunks: list[SourceChunk], n: int, *, llm: Any,
             generator: str, kinds: tuple[str, ...], progress: bool = True, max_cost: float | None = None,
             price: Any = None) -> SynthOutcome:
    """Ask for questions chunk by chunk (``chunks`` in their spread order) until ``n`` pass the checks
    or the chunks run out. A provider failure or Ctrl-C ends the loop with what was made (``stopped``)."""
    bound = overlap_bound(dataset, settings, chunks)
    state = SynthRun(n, bound.max_overlap)
    cache = DiskCache(settings.cache_dir / "synth.sqlite")
    stopped: str | None = None
    spent = 0.0
    bar = progress_bar(total=n, desc="synth", unit="question", enabled=progress)
    try:
        for chunk in chunks:
            if len(state.records) >= n:
                break
            cand = candidate(chunk, kinds)
            key = cand.key(generator)
            reply = cache.get(key)
            if reply is None:
                if _over_budget(max_cost, price, spent, cand.text):
                    stopped = f"stopped before the cost would pass --max-cost ${max_cost:.4f} (≈ ${spent:.4f} spent)"
                    break
                try:
                    reply = ask(llm, cand.text)
                except ProviderError as exc:
                    stopped = f"the provider failed: {exc.message}"
                    break
                state.calls += 1
                state.seconds += reply.get("seconds", 0.0)
                if price is not None:
                    spent += price.cost(reply.get("prompt_tokens", 0), reply.get("completion_tokens", 0))
                if "error" not in reply:
                    cache.put(key, reply, kind="synth")
            else:
                state.cached += 1
                state.cached_seconds += float(reply.get("seconds") or 0.0)
            if state.take(cand, reply, generator):
                bar.update(1)
            elif state.calls and state.calls % 10 == 0 and "error" not in reply:
                progress_note(f"synth: {sum(state.rejected.values())} candidates rejected so far "
                              f"({', '.join(f'{r} {c}' for r, c in state.rejected.most_common())})")
    except KeyboardInterrupt:
        stopped = "interrupted (Ctrl-C)"
    finally:
        bar.close()
        cache.close()
    return SynthOutcome(records=state.records, requested=n, candidates=sum(state.kinds_asked.values()),
                        rejected=dict(state.rejected), calls=state.calls, cached=state.cached,
                        seconds=round(state.seconds, 1), cached_seconds=round(state.cached_seconds, 1),
                        overlaps=state.overlaps, bound=bound, kinds=dict(state.kinds_asked), generator=generator,
                        stopped=stopped, spent=round(spent, 6))


def _over_budget(max_cost: float | None, price: Any, spent: float, prompt_text: str) -> bool:
    """Would the next call (its prompt at ≈ 3 characters a token, a full reply) pass ``max_cost``?"""
    if max_cost is None or price is None:
        return False
    return spent + price.cost(len(prompt_text) // 3, REPLY_MAX_TOKENS) > max_cost
