"""A finished evaluation run, opened for comparison: refused when it is not a run folder, not an
``eval`` run, or still being written (its lock held); a damaged ``samples.jsonl`` line is named by
file and line (:func:`rag_lab.evaluate.store.run_folder.scan_samples`)."""

from __future__ import annotations

from pathlib import Path

from rag_lab.errors import ConfigError
from rag_lab.evaluate.store.frames import EvalRun, load_run
from rag_lab.evaluate.store.run_folder import MANIFEST
from rag_lab.evaluate.store.run_lock import LOCK_FILE, RunFolderBusyError, lock_holder

OTHER_KINDS = {"ablation": "rag-lab ablate", "ir": "rag-lab ir --out"}


def open_run(path: str | Path) -> EvalRun:
    """The run in ``path`` (an ``rag-lab eval --out`` folder), checked before anything is read."""
    path = Path(path)
    if not path.is_dir():
        raise ConfigError(f"{path} is not a run folder (no such folder)",
                          "pass the --out folder of `rag-lab eval` (list them: rag-lab runs)")
    if not (path / MANIFEST).exists():
        raise ConfigError(f"{path} is not a run folder (no {MANIFEST})",
                          "pass the --out folder of `rag-lab eval` (list them: rag-lab runs)")
    holder = lock_holder(path)
    if holder is not None:
        raise RunFolderBusyError(f"{path} is still being written: {path / LOCK_FILE} is held by PID {holder}",
                                 "wait for that run to finish (or stop it), then compare")
    run = load_run(path)
    kind = run.manifest.get("kind")
    if kind in OTHER_KINDS:
        raise ConfigError(f"{path} holds a `{OTHER_KINDS[kind]}` run; compare reads evaluation runs",
                          "pass two --out folders of `rag-lab eval`")
    if not run.records:
        raise ConfigError(f"{path} holds no samples yet (no <mode>/samples.jsonl)",
                          "finish the run with `rag-lab eval --resume`, or pass another run")
    return run
