"""The LLM disk cache commits every entry without an fsync (WAL, synchronous=NORMAL: an fsynced commit
took ≈ 12 ms under the cache's lock, a queue for the samples in flight of `eval --concurrency`), and
still keeps every committed entry when the process is killed."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys

from rag_lab.models.llm.disk_cache import DiskCache

WRITER = """
import os, signal, sys
from rag_lab.models.llm.disk_cache import DiskCache
cache = DiskCache(sys.argv[1])
for i in range(20):
    cache.put(f"k{i}", {"score": i}, kind="judge")
os.kill(os.getpid(), signal.SIGKILL)  # no close, no checkpoint
"""


def test_commits_are_not_fsynced(tmp_path):
    cache = DiskCache(tmp_path / "llm.sqlite")
    assert cache._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL (FULL = 2 fsyncs every commit)
    cache.close()


def test_entries_survive_a_killed_process(tmp_path):
    path = tmp_path / "llm.sqlite"
    done = subprocess.run([sys.executable, "-c", WRITER, str(path)], timeout=120)
    assert done.returncode == -signal.SIGKILL
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 20
    cache = DiskCache(path)
    assert cache.get("k19") == {"score": 19} and cache.get("k0") == {"score": 0}
    cache.close()
