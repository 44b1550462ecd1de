"""One model file is loaded once per process even when the judge (16k window) and the generator
(4k) ask for different windows: a smaller window reuses the loaded runtime, a larger one replaces it."""

from __future__ import annotations

import pytest

from rag_lab.models.llm import runtime


@pytest.fixture
def loads(monkeypatch):
    """A fake loader (no model is loaded): records each (path, n_ctx, threads) it is asked for."""
    calls: list[tuple[str, int, int]] = []

    def fake_load(path: str, n_ctx: int, threads: int):
        calls.append((path, n_ctx, threads))
        return object()

    monkeypatch.setattr(runtime, "_load_server", fake_load)
    monkeypatch.setattr(runtime, "_runtimes", {})
    return calls


def test_judge_first_then_generator_shares_one_load(loads):
    judge = runtime.load_runtime("/models/qwen.gguf", 16384, 2)
    generator = runtime.load_runtime("/models/qwen.gguf", 4096, 2)
    assert generator is judge and generator.n_ctx == 16384
    assert loads == [("/models/qwen.gguf", 16384, 2)]


def test_generator_first_then_judge_loads_the_larger_window_once(loads):
    small = runtime.load_runtime("/models/qwen.gguf", 4096, 2)
    large = runtime.load_runtime("/models/qwen.gguf", 16384, 2)
    assert large.n_ctx == 16384 and large is not small
    assert runtime.load_runtime("/models/qwen.gguf", 4096, 2) is large  # later small requests reuse it
    assert runtime.loaded_runtimes() == [large]  # the 4k runtime is no longer kept
    assert loads == [("/models/qwen.gguf", 4096, 2), ("/models/qwen.gguf", 16384, 2)]


def test_other_file_or_thread_count_is_its_own_runtime(loads):
    first = runtime.load_runtime("/models/qwen.gguf", 4096, 2)
    assert runtime.load_runtime("/models/qwen.gguf", 4096, 1) is not first
    assert runtime.load_runtime("/models/other.gguf", 4096, 2) is not first
    assert len(loads) == 3
