"""One writer per run folder: an exclusive ``fcntl`` lock on ``<run>/.lock``.

    with run_lock(out):
        ...  # write samples, manifest

Two processes writing one run folder lose data (the second deletes or doubles the first's
samples), so a second writer is refused at once with a message naming the holder's PID. The lock
is the kernel's (``flock``): it is released when the holder exits, even by SIGKILL, so a stale
``.lock`` file never blocks a later run.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rag_lab.errors import ConfigError

LOCK_FILE = ".lock"


class RunFolderBusyError(ConfigError):
    """Another process holds the run folder's lock."""


@contextmanager
def exclusive_lock(path: Path, stamp: str, busy) -> Iterator[Path]:
    """Hold the kernel's exclusive lock on the file ``path`` for the ``with`` block, with ``stamp``
    written in it while held; another holder → ``busy(its stamp)`` is raised at once."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy(os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{stamp}\n".encode(), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)  # the stamp is only meaningful while held
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def run_lock(folder: str | Path) -> Iterator[Path]:
    """Hold the exclusive lock on ``folder`` (created if missing) for the ``with`` block."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    def busy(holder: str) -> RunFolderBusyError:
        return RunFolderBusyError(f"{folder} is in use by another rag-lab process (PID {holder})",
                                  "wait for it to finish (or stop it), or write to another --out folder")

    with exclusive_lock(folder / LOCK_FILE, str(os.getpid()), busy):
        yield folder


def lock_holder(folder: str | Path) -> str | None:
    """Who is writing ``folder`` right now: the PID in its held ``.lock`` (``"unknown"`` when it wrote
    none), or None when no process holds the lock (a finished or killed run). Only tries a shared
    lock for an instant: readers never block a writer for longer."""
    path = Path(folder) / LOCK_FILE
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
