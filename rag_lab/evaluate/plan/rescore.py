"""What ``eval --resume`` runs again: samples whose answer or judged metric failed for a reason that
may pass — a server error, a timeout, the judge deadline, a rate limit, a lost connection, or any error
not known to be final. Failures that will not change on their own — a refused key or model (HTTP
401/403/404, and the later metrics "not asked" after such a refusal), a request the provider rejected
(400), a judgement that could not be parsed even after its retry (or came back NaN), a metric that does
not apply to the sample (``NotApplicable``: a refusal's faithfulness), a response body that is not JSON — are kept as recorded unless ``--retry-failed`` asks for them too.

A sample run again keeps what succeeded: its answer comes from the answer cache and its judged scores
that succeeded from the judge cache (NaN is never cached), so only the failed metrics call the judge;
:func:`keep_scored` also keeps a score the earlier line had and the new one lost, for the same answer.
"""

from __future__ import annotations

import re
from typing import Any

# Error texts (as rag_lab.models.llm._openai_sdk, the Bedrock classifier, RAGAS and the scorer write them)
# of failures that will not change by asking again. A 408 or 429 is not among them: those pass.
_FINAL = re.compile(
    r"refused access|authentication failed|access ?denied|HTTP 40[0134]\b|request rejected|model or endpoint not "
    r"found|OutputParser|failed to parse|not valid JSON|malformed response|NaN score|Invalid JSON|NotApplicable",
    re.IGNORECASE)


def is_transient(error: str | None) -> bool:
    """Does this recorded error (an answer's, or a judged metric's) say it may pass on a later try?"""
    return bool(error) and _FINAL.search(error) is None


def failures(record: dict[str, Any]) -> list[str]:
    """The recorded errors of a sample: its answer's, else its metrics'."""
    if record.get("error"):
        return [str(record["error"])]
    return [str(text) for text in (record.get("score_errors") or {}).values() if text]


def needs_rerun(record: dict[str, Any], retry_failed: bool = False) -> bool:
    """Run this recorded sample again on ``--resume``: a transient failure (or any, with ``retry_failed``)."""
    errors = failures(record)
    return any(is_transient(e) for e in errors) or (retry_failed and bool(errors))


def kept_failures(record: dict[str, Any]) -> int:
    """How many failures of this record a resume keeps (will not change without ``--retry-failed``)."""
    return sum(1 for e in failures(record) if not is_transient(e))


def keep_scored(previous: dict[str, Any] | None, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` (a sample run again) with every score ``previous`` had and the new run lost, when both
    scored the same answer; marks it ``rescored`` (how many times a resume ran it again)."""
    if previous is None:
        return record
    record["rescored"] = int(previous.get("rescored") or 0) + 1
    if record.get("error") or previous.get("error") or record.get("answer") != previous.get("answer"):
        return record
    scores, errors = record.setdefault("scores", {}), record.setdefault("score_errors", {})
    for metric, value in (previous.get("scores") or {}).items():
        if value is not None and scores.get(metric) is None:
            scores[metric] = value
            errors.pop(metric, None)
    return record
