"""What ``synth`` writes: ``qa.jsonl``-shaped lines (so ``ir``, ``eval`` and the rest read them as any
question file) and a summary beside them (counts by rejection reason, overlap distributions)."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_lab.datasets import SYNTHETIC_QA
from rag_lab.evaluate.questions.calibration import OverlapBound, quantiles
from rag_lab.evaluate.questions.kinds import PROMPT_VERSION
from rag_lab.evaluate.questions.sampling import SourceChunk

SYNTHETIC_FILE = SYNTHETIC_QA
ORIGIN = "synthetic"


def summary_path(out: Path) -> Path:
    """``qa.synthetic.jsonl`` → ``qa.synthetic.summary.json``."""
    return out.with_name(out.name.removesuffix(".jsonl") + ".summary.json")


def question_record(chunk: SourceChunk, reply: dict[str, Any], *, kind: str, generator: str,
                    overlap: float) -> dict[str, Any]:
    """One output line; ``source_file`` is the document key (what ``qa.jsonl`` names), so the
    document-level relevance of ``ir`` follows; the chunk is named too."""
    digest = hashlib.sha256(f"{chunk.chunk_id}\n{reply['question']}".encode()).hexdigest()[:12]
    return {"id": f"synthetic-{digest}", "question": reply["question"], "reference_answer": reply["answer"],
            "source_file": chunk.document, "source_chunk": chunk.chunk_id, "page": chunk.page,
            "origin": ORIGIN, "kind": kind, "generator": generator, "prompt_version": PROMPT_VERSION,
            "overlap": overlap}


@dataclass
class SynthOutcome:
    """A ``synth`` run's result: the accepted lines and everything the summary reports."""

    records: list[dict[str, Any]]
    requested: int
    candidates: int
    rejected: dict[str, int]
    calls: int
    cached: int
    seconds: float
    cached_seconds: float
    overlaps: list[float]
    bound: OverlapBound
    kinds: dict[str, int]
    generator: str
    stopped: str | None = None
    spent: float = 0.0
    out: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def made(self) -> int:
        return len(self.records)

    def summary(self) -> dict[str, Any]:
        return {"origin": ORIGIN, "generator": self.generator, "prompt_version": PROMPT_VERSION,
                "requested": self.requested, "made": self.made, "candidates": self.candidates,
                "rejected": self.rejected, "kinds_asked": self.kinds,
                "kinds_kept": _count(r["kind"] for r in self.records),
                "llm_calls": self.calls, "cached_replies": self.cached, "llm_seconds": self.seconds,
                "cached_replies_seconds": self.cached_seconds,
                "cost_usd": self.spent, "stopped": self.stopped,
                "overlap": {"max_allowed": self.bound.max_overlap, "bound_from": self.bound.source,
                            "human": quantiles(self.bound.human), "candidates": quantiles(self.overlaps),
                            "kept": quantiles([r["overlap"] for r in self.records])},
                **self.extra}

    def line(self) -> str:
        rejected = ", ".join(f"{reason} {count}" for reason, count in sorted(self.rejected.items(), key=lambda x: -x[1]))
        return (f"{self.made}/{self.requested} questions from {self.candidates} candidates "
                f"({self.calls} LLM call(s), {self.cached} cached); rejected: {rejected or 'none'}")


def _count(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_outcome(outcome: SynthOutcome, out: Path) -> None:
    """The lines and the summary, each replaced whole (a reader never sees half a file)."""
    write_atomic(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in outcome.records))
    write_atomic(summary_path(out), json.dumps(outcome.summary(), indent=2, ensure_ascii=False) + "\n")
    outcome.out = out
