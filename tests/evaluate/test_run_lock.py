"""One writer per run folder: a second `eval`, `ablate` or `ir --out` on a folder another process
writes is refused, naming the holder's PID; the lock dies with its holder (even by SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rag_lab.evaluate.store.run_lock import RunFolderBusyError, run_lock
from tests.evaluate.test_integrity import make_folder

REPO = Path(__file__).resolve().parents[2]
HOLD = ("import sys, time\nfrom rag_lab.evaluate.store.run_lock import run_lock\n"
        "with run_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(120)\n")


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_LAB_") and k != "QDRANT_URL"}
    return {**env, "PYTHONPATH": str(REPO), "RAG_LAB_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}


@pytest.fixture
def holder(tmp_path):
    """A real process holding the lock of ``tmp_path / "run"``."""
    folder = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True,
                            env=_env(tmp_path))
    try:
        assert proc.stdout.readline().strip() == "held"
        yield folder, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


@pytest.mark.parametrize("command", [["eval", "--modes", "bm25"], ["ir", "--modes", "bm25"],
                                     ["ablate", "--modes", "fusion", "--answer-configs", "none"]],
                         ids=["eval", "ir", "ablate"])
def test_a_second_writer_is_refused_naming_the_holders_pid(holder, tmp_path, command):
    folder, proc = holder
    dataset = make_folder(tmp_path / "pets")
    argv = [sys.executable, "-m", "rag_lab", command[0], str(dataset), *command[1:], "--out", str(folder)]
    done = subprocess.run(argv, capture_output=True, text=True, env=_env(tmp_path), timeout=300, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"{folder} is in use by another rag-lab process (PID {proc.pid})" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (folder / "manifest.json").exists() and not (folder / "bm25").exists()  # nothing touched


def test_the_lock_dies_with_its_holder_even_by_sigkill(holder):
    folder, proc = holder
    with pytest.raises(RunFolderBusyError, match=f"PID {proc.pid}"):
        with run_lock(folder):
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with run_lock(folder):  # the kernel released it: a stale .lock file never blocks
        assert (folder / ".lock").read_text().strip() == str(os.getpid())
