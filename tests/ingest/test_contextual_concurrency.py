"""The contextual-index LLM pass with N calls in flight: the real openai SDK and LlamaIndex against a
fake OpenAI-compatible server on 127.0.0.1; the cache (written by one thread, a row per finished chunk)
resumes exactly, and the contexts and counts equal a one-at-a-time run."""

from __future__ import annotations

import re
import sqlite3

import pytest
from llama_index.core import Document
from llama_index.core.schema import TextNode

from rag_lab.errors import ConfigError
from rag_lab.ingest.contextual import ChunkContextualizer, ContextCache, ContextRequest, contextualize
from rag_lab.models.llm import get_llm
from tests.models.fake_openai_server import run_within

DOCUMENT = "Child Care Services guide of the Texas Workforce Commission, Board Contract Year 2026.\n\n"
CHUNKS = [f"Rule {n}: a family of {n} members may earn up to ${1000 * n:,} a month and stay eligible." for n in range(8)]


def _context(prompt: str) -> str:
    rule = re.search(r"<chunk>\nRule (\d+)", prompt)
    return f"This chunk of the Texas child care guide states the income limit for families of size {rule.group(1)}."


def _requests() -> list[ContextRequest]:
    document = DOCUMENT + "\n".join(CHUNKS)
    return [ContextRequest(document, c) for c in CHUNKS + CHUNKS[:1]]  # the first chunk twice: asked once


def _run(llm, path, concurrency):
    """One contextual pass (bounded in time) with its cache at ``path``: (contexts, stats, rows cached)."""
    def run():
        with ContextCache(path) as cache:  # opened in the thread that runs the pass, as contextualize() does
            contexts, stats = ChunkContextualizer(llm, "m", cache).run(_requests(), progress=False,
                                                                        concurrency=concurrency)
            return contexts, stats, len(cache)
    return run_within(120, run)[0]


def test_contexts_in_flight_resume_exactly_and_equal_a_sequential_run(lab_settings, fake_openai, tmp_path):
    fake = fake_openai(reply=_context, latency=0.3)
    settings = lab_settings.model_copy(update={"llm_provider": "openai_compatible", "llm_base_url": fake.url,
                                               "llm_model": "fake-context"})
    llm = get_llm(settings)
    contexts, stats, _ = _run(llm, tmp_path / "c4.sqlite", 4)
    assert fake.max_in_flight >= 2 and len(fake.requests) == len(CHUNKS)  # the repeated chunk asked once
    assert contexts == [_context(f"<chunk>\n{c}") for c in CHUNKS + CHUNKS[:1]]
    assert (stats.chunks, stats.calls, stats.from_cache, stats.contextualised) == (9, 8, 1, 9)

    # killed with 3 calls in flight: their rows never reached the cache
    with sqlite3.connect(tmp_path / "c4.sqlite") as db:
        db.execute("DELETE FROM contexts WHERE rowid IN (SELECT rowid FROM contexts LIMIT 3)")
    asked = len(fake.requests)
    again, resumed, rows = _run(llm, tmp_path / "c4.sqlite", 4)
    assert len(fake.requests) - asked == 3 and resumed.calls == 3 and resumed.from_cache == 6
    assert again == contexts and rows == len(CHUNKS)

    sequential, one_by_one, _ = _run(llm, tmp_path / "c1.sqlite", 1)
    assert sequential == contexts and one_by_one.to_dict() | {"seconds": 0} == stats.to_dict() | {"seconds": 0}


def test_the_local_model_refuses_more_than_one_call_at_a_time(lab_settings):
    local = lab_settings.model_copy(update={"llm_provider": "local", "llm_concurrency": 2})
    node = TextNode(text=CHUNKS[0], metadata={"doc_id": "guide.pdf"})
    with pytest.raises(ConfigError, match=r"--concurrency 2: the local model"):
        contextualize([node], [Document(text=DOCUMENT, metadata={"doc_id": "guide.pdf"})], "llm", local)
