"""rag_lab.progress: tqdm on a terminal, plain periodic lines otherwise, interval from the env."""

from __future__ import annotations

import io

import pytest

from rag_lab.errors import ConfigError
from rag_lab.progress import PlainProgress, progress_bar, progress_interval


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_not_a_tty_gives_plain_lines_without_carriage_returns():
    stream = io.StringIO()
    items = list(progress_bar(range(7), desc="dense", unit="query", stream=stream, interval=0))
    assert items == list(range(7))
    out = stream.getvalue()
    assert "\r" not in out
    lines = out.strip().splitlines()
    assert lines[-1].startswith("dense: 7/7 queries (100%)")
    assert len(lines) >= 7  # interval 0: one line per update, plus the final one


def test_plain_lines_are_periodic():
    clock = FakeClock()
    stream = io.StringIO()
    bar = PlainProgress(total=100, desc="embedding", unit="chunk", stream=stream, interval=10, clock=clock)
    for _ in range(100):
        clock.now += 1.0  # 1 s per chunk: a line every 10 chunks
        bar.update(1)
    bar.close()
    lines = stream.getvalue().strip().splitlines()
    assert len(lines) == 10  # every 10 chunks; the last periodic line is the final count, not repeated
    assert lines[0].startswith("embedding: 10/100 chunks (10%)")
    assert "~1m30s left" in lines[0]
    assert lines[-1].startswith("embedding: 100/100 chunks (100%)")
    assert not lines[-2].startswith("embedding: 100/100")


def test_a_slow_run_reads_seconds_per_item_not_zero_items_per_second():
    clock = FakeClock()
    stream = io.StringIO()
    bar = PlainProgress(total=10, desc="eval", unit="sample", stream=stream, interval=10, clock=clock)
    clock.now += 37.0  # one answer of the local model
    bar.update(1)
    line = stream.getvalue().strip()
    assert "37.0 s/sample" in line and "0.0 sample/s" not in line and "~5m33s left" in line


def test_quiet_until_the_interval_then_one_final_line():
    stream = io.StringIO()
    with progress_bar(total=3, desc="writing Qdrant", unit="chunk", stream=stream, interval=60) as bar:
        bar.update(1)
        bar.update(2)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("writing Qdrant: 3/3 chunks (100%)")


def test_interval_from_the_environment(monkeypatch):
    monkeypatch.setenv("RAG_LAB_PROGRESS_INTERVAL", "2.5")
    assert progress_interval() == 2.5
    assert PlainProgress(total=1, stream=io.StringIO()).interval == 2.5
    monkeypatch.delenv("RAG_LAB_PROGRESS_INTERVAL")
    assert progress_interval() == 10.0
    monkeypatch.setenv("RAG_LAB_PROGRESS_INTERVAL", "soon")
    with pytest.raises(ConfigError, match="RAG_LAB_PROGRESS_INTERVAL"):
        progress_interval()


def test_a_terminal_gets_tqdm():
    from tqdm import tqdm

    stream = TTY()
    bar = progress_bar(total=5, desc="x", stream=stream)
    try:
        assert isinstance(bar, tqdm)
    finally:
        bar.close()


def test_disabled_prints_nothing_but_still_iterates():
    stream = TTY()
    assert list(progress_bar(["a", "b"], enabled=False, stream=stream)) == ["a", "b"]
    assert stream.getvalue() == ""


def test_build_index_progress_goes_through_the_helper(monkeypatch):
    """The long loops (embedding, Qdrant writes, IR runs) use the one helper, not tqdm directly."""
    import rag_lab.evaluate.retrieval.ir as ir
    import rag_lab.index.build as build

    assert build.progress_bar is progress_bar
    assert ir.progress_bar is progress_bar
    assert not hasattr(build, "tqdm") and not hasattr(ir, "tqdm")


def test_progress_note_goes_above_the_innermost_open_bar_at_once(caplog):
    import logging

    from rag_lab.progress import progress_note

    outer, inner = io.StringIO(), io.StringIO()
    with progress_bar(total=3, desc="eval", stream=outer, interval=1e9):
        with progress_bar(total=2, desc="bm25", stream=inner, interval=1e9):
            progress_note("retry 1 of 3 after HTTP 500")
            assert inner.getvalue() == "bm25: retry 1 of 3 after HTTP 500\n"  # now, not at the next interval
        progress_note("retry 2 of 3 after HTTP 500")
        assert outer.getvalue() == "eval: retry 2 of 3 after HTTP 500\n"
    with progress_bar(total=1, enabled=False, stream=outer):
        progress_note("quiet")  # progress off: nothing
    assert "quiet" not in outer.getvalue()
    tty = TTY()
    with progress_bar(total=2, desc="dense", stream=tty):  # tqdm: a line above the bar
        progress_note("retry 1 of 3 after a timeout or connection error")
    assert "dense: retry 1 of 3 after a timeout or connection error\n" in tty.getvalue()
    with caplog.at_level(logging.INFO, logger="rag_lab.progress"):
        progress_note("no bar open")  # a library call without a bar: a log record
    assert [r.getMessage() for r in caplog.records] == ["no bar open"]


QUIET_PROBE = """
import logging, os, warnings
import rag_lab  # what a notebook kernel imports first
import bm25s  # sets its own logger to DEBUG on import
logging.basicConfig(level=logging.DEBUG)  # a kernel or library that logs everything to stderr
logging.getLogger("bm25s").debug("Building index from tokens")
logging.getLogger("bm25s").warning("a real problem")
warnings.warn("IProgress not found. Please update jupyter and ipywidgets.")
print(os.environ["HF_HUB_DISABLE_PROGRESS_BARS"], os.environ["TOKENIZERS_PARALLELISM"])
"""


def test_importing_rag_lab_keeps_library_progress_and_chatter_off_stderr():
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_DISABLE_PROGRESS_BARS", "TOKENIZERS_PARALLELISM")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", QUIET_PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "false"]  # transformers' "Loading weights" bars off, as in the CLI
    assert done.stderr.strip() == "WARNING:bm25s:a real problem"  # no DEBUG line, no IProgress warning
