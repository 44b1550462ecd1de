"""Synthetic questions as RAGAS types: a ``Testset`` (what RAGAS's own ``TestsetGenerator`` returns)
whose samples carry the question, its reference answer and its source chunk as the reference context,
so anything written for RAGAS test sets reads ``synth``'s output (``.to_evaluation_dataset()`` too)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before ragas is imported: no analytics calls
from ragas.dataset_schema import SingleTurnSample  # noqa: E402
from ragas.testset.synthesizers.testset_schema import Testset, TestsetSample  # noqa: E402


def to_testset(records: Iterable[Mapping[str, Any]], chunk_texts: Mapping[str, str]) -> Testset:
    """``synth``'s lines (``qa.synthetic.jsonl``) → a RAGAS ``Testset``; ``chunk_texts`` maps a line's
    ``source_chunk`` to its text. The synthesizer name is ``rag-lab synth:<kind>``."""
    samples = [TestsetSample(eval_sample=SingleTurnSample(user_input=r["question"], reference=r.get("reference_answer"),
                                                          reference_contexts=[chunk_texts[r["source_chunk"]]]
                                                          if r.get("source_chunk") in chunk_texts else None),
                             synthesizer_name=f"rag-lab synth:{r.get('kind', '?')}")
               for r in records]
    return Testset(samples=samples)
