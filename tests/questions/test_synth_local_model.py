"""The real path: the configured local model (the 1.5B GGUF on llama.cpp) writes a question under the
JSON schema, the checks judge it, and a second run calls nothing."""

from __future__ import annotations

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.questions import synth

pytestmark = pytest.mark.slow


def test_the_local_model_writes_checked_questions_and_a_rerun_calls_nothing(corpus, small_settings):
    from rag_lab.models.llm import get_llm

    llm = get_llm(small_settings)
    dataset = resolve_dataset(corpus)
    first = synth(dataset, small_settings, n=1, llm=llm, progress=False, kinds=("figure",))
    assert first.calls >= 1 and first.candidates == first.calls
    assert first.made == 1 or sum(first.rejected.values()) == first.candidates  # each candidate judged, none lost
    assert all(r["generator"].startswith("local:") for r in first.records)
    again = synth(dataset, small_settings, n=1, llm=llm, progress=False, kinds=("figure",))
    assert again.calls == 0 and again.cached == first.calls and again.records == first.records
