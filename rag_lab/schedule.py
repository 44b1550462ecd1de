"""Keep N samples in flight; the driver thread alone writes the results.

Workers (a thread pool: the provider SDKs are synchronous) answer and score one sample each. The
driver appends every finished sample as one fsynced line, in the order they finish, so a SIGKILL
loses at most the N samples in flight and ``--resume`` answers exactly those again. Before a sample
starts, the :class:`RunGuard` checks the cost budget (``--max-cost``); after it finishes, the guard
counts consecutive provider failures and stops the run with one message instead of recording
hundreds of errors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from rag_lab.errors import RagLabError


class RunStopped(RagLabError):
    """The run stopped on purpose (budget, repeated provider failures); finished samples are kept."""


_STATUS = re.compile(r"HTTP (\d{3})")
_MODEL = re.compile(r"([A-Za-z][\w-]*(?: [\w-]+)? model '[^']+')")
_KINDS = ("timed out", "could not reach", "malformed response", "not valid JSON")


def provider_failure(record: dict[str, Any]) -> str | None:
    """The provider error a sample ended with (its answer's, or a judged metric's), else None.

    A judge that refused access earlier in the run counts as that refusal (``JudgeNotAsked``)."""
    texts = [record.get("error") or ""] + list((record.get("score_errors") or {}).values())
    for text in texts:
        if text.startswith("Provider") or "refused access earlier" in text:
            return text
    return None


def failure_signature(text: str) -> str:
    """What makes two failures "the same": the model and the status (or kind) of the error."""
    model = _MODEL.search(text)
    status = _STATUS.search(text)
    kind = next((k for k in _KINDS if k in text), None)
    what = f"HTTP {status.group(1)}" if status else (kind or text.split(":", 1)[0])
    return f"{model.group(1) if model else 'provider'}: {what}"


def _advice(text: str) -> str:
    """What to do, and whether a plain ``--resume`` runs these samples again (a failure that may pass:
    server error, timeout, rate limit, connection …) or only ``--resume --retry-failed`` does (a refusal,
    see :mod:`rag_lab.evaluate.plan.rescore`)."""
    status = _STATUS.search(text)
    code = int(status.group(1)) if status else None
    again = " (it runs again the samples that failed this way, keeping what succeeded)"
    refused = (" --retry-failed (a refused request will not change on its own: a plain --resume keeps it as "
               "failed)")
    if code == 429:
        return ("the provider is rate limiting: lower --concurrency, set RAG_LAB_LLM_RPM (requests per minute), "
                "or check your quota; then rag-lab eval --resume" + again)
    if code in (401, 403):
        return "check the API key (and its access to this model); then rag-lab eval --resume" + refused
    if code == 404:
        return "check the model name and the base URL; then rag-lab eval --resume" + refused
    if code is not None and code >= 500:
        return "the provider's server is failing: try again later with rag-lab eval --resume" + again
    if "timed out" in text or "deadline" in text:
        return "raise RAG_LAB_REQUEST_TIMEOUT or lower --concurrency; then rag-lab eval --resume" + again
    if "could not reach" in text:
        return "check that the provider is reachable; then rag-lab eval --resume" + again
    return "check that the provider is reachable and configured; then rag-lab eval --resume" + again


@dataclass
class RunGuard:
    """Budget and failure-streak checks of one run (all calls from the driver thread).

    ``estimate(item)`` is a sample's estimated cost before it runs, ``spent(record)`` its cost
    once finished (its answer's actual usage where known)."""

    max_failures: int = 5  # 0: never stop
    max_cost: float | None = None
    estimate: Callable[[Any], float] = lambda item: 0.0
    spent: Callable[[dict[str, Any], float], float] = lambda record, estimate: estimate
    total_spent: float = 0.0
    reserved: float = 0.0
    streak: list[str] = field(default_factory=list)

    def reserve(self, item: Any) -> float:
        """The sample's estimate, reserved; raises :class:`RunStopped` when it would pass ``max_cost``."""
        cost = self.estimate(item)
        if self.max_cost is not None and self.total_spent + self.reserved + cost > self.max_cost + 1e-12:
            raise RunStopped(
                f"stopped before the cost estimate would pass --max-cost ${self.max_cost:.4f}: "
                f"≈ ${self.total_spent:.4f} spent, ${self.reserved:.4f} in flight, the next sample ≈ ${cost:.4f}",
                "finished samples are kept: raise --max-cost and continue with rag-lab eval --resume "
                "(rag-lab eval --dry-run shows what the rest costs)")
        self.reserved += cost
        return cost

    def finished(self, record: dict[str, Any], reserved: float) -> None:
        self.reserved -= reserved
        cost = self.spent(record, reserved)
        self.total_spent += cost if math.isfinite(cost) else reserved
        failure = provider_failure(record)
        if failure is None:
            self.streak.clear()
            return
        if self.streak and failure_signature(self.streak[-1]) != failure_signature(failure):
            self.streak.clear()
        self.streak.append(failure)

    def check_streak(self) -> None:
        if self.max_failures and len(self.streak) >= self.max_failures:
            last = self.streak[-1]
            # the recorded error carries the provider's own "→ hint"; the stop gives one hint, its own
            message = last.split("\n  → ", 1)[0]
            raise RunStopped(
                f"stopped after {len(self.streak)} samples in a row failed with the same provider error "
                f"({failure_signature(last)}): {message[:400]}",
                _advice(last) + " (RAG_LAB_MAX_CONSECUTIVE_FAILURES sets how many failures in a row stop a run)")


def run_in_flight(items: Iterable[Any], work: Callable[[Any], dict[str, Any]],
                  write: Callable[[dict[str, Any]], None], *, concurrency: int, guard: RunGuard | None = None,
                  on_done: Callable[[], None] = lambda: None) -> int:
    """``work(item)`` on up to ``concurrency`` items at once; ``write(record)`` each result here,
    in the calling thread. On a stop (budget, failure streak) no new item starts, the ones in
    flight finish and are written, then :class:`RunStopped` is raised. Returns items written."""
    guard = guard or RunGuard(max_failures=0)
    pending = iter(items)
    in_flight: dict[Future, float] = {}
    written = 0
    stop: RunStopped | None = None
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="rag-lab-sample") as pool:
        try:
            while True:
                while stop is None and len(in_flight) < concurrency:
                    item = next(pending, _END)
                    if item is _END:
                        break
                    try:
                        cost = guard.reserve(item)
                    except RunStopped as exc:
                        stop = exc
                        break
                    in_flight[pool.submit(work, item)] = cost
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    record = future.result()  # work() records its own errors; anything else is a bug
                    write(record)
                    written += 1
                    on_done()
                    guard.finished(record, in_flight.pop(future))
                if stop is None:
                    try:
                        guard.check_streak()
                    except RunStopped as exc:
                        stop = exc
        except BaseException:  # Ctrl-C or a bug: start nothing new; the running ones end with the pool
            for future in in_flight:
                future.cancel()
            raise
    if stop is not None:
        raise stop
    return written


_END = object()
