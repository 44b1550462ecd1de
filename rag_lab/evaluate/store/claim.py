"""Whose run a folder holds, checked before a command writes a run into it.

    owner = RunOwner("eval", "texas_childcare", data=dataset_hash(dataset), summary="bm25,hybrid; 2 questions")
    moved = claim_run_folder(out, owner, differences, force=force)   # None, or where the old run went

A run folder holds one run. ``eval``, ``ablate`` and ``tune`` write into ``--out`` only when it holds
no run, or a run of the same kind, dataset and configuration (which the command continues or
repeats). Any other run there is refused with one message naming both runs; ``force=True`` first
moves the old run's files into a timestamped sibling folder (``runs/tour.moved-20261128-164501``)
and deletes nothing. :func:`folder_note` is the same verdict as a line for ``--dry-run``.

What "the same configuration" means is the caller's (each kind of run knows what shapes its
results); it hands the differences in as ``label: old → new`` lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError, RagLabWarning, warn_at_caller
from rag_lab.evaluate.store.run_lock import LOCK_FILE
from rag_lab.evaluate.store.run_folder import MANIFEST

TUNE_REPORT = "tune.json"  # a tune run's record (it writes no manifest.json)
KIND_NAMES = {"unknown": "a run", "eval": "an eval run", "ablation": "an ablation run", "ir": "an IR run", "tune": "a tune run"}


class RunFolderTakenError(ConfigError):
    """The run folder holds another run (another dataset, kind or configuration)."""


@dataclass(frozen=True)
class RunOwner:
    """What a run folder's run is: its kind, dataset and a short summary for messages."""

    kind: str  # eval | ablation | ir | tune
    dataset: str  # the dataset's name
    data: str | None = None  # what tells two datasets of one name apart (content hash or folder), when known
    summary: str = ""  # e.g. "modes bm25,hybrid; 2 questions"

    def describe(self) -> str:
        return (f"{KIND_NAMES.get(self.kind, f'a {self.kind} run')} of {self.dataset}"
                + (f" ({self.summary})" if self.summary else ""))


def folder_owner(folder: str | Path) -> RunOwner | None:
    """The run ``folder`` holds (read from its manifest.json or tune.json), or None when it holds none.
    A manifest that cannot be read still marks the folder as taken (by an unknown run)."""
    folder = Path(folder)
    manifest, tune = folder / MANIFEST, folder / TUNE_REPORT
    if manifest.is_file():
        data = _read_json(manifest)
        if data is None:
            return RunOwner("unknown", "an unknown dataset", summary=f"{manifest} is not readable JSON")
        return owner_of(data)
    if tune.is_file():
        data = _read_json(tune) or {}
        return RunOwner("tune", str(data.get("dataset") or "an unknown dataset"), data.get("dataset_root"),
                        summary=f"metric {data['metric']}" if data.get("metric") else "")
    return None


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def owner_of(manifest: dict[str, Any]) -> RunOwner:
    """The run a manifest describes (eval, ir or ablation)."""
    kind = str(manifest.get("kind") or "eval")
    if kind == "ablation":
        return RunOwner(kind, str(manifest.get("dataset") or "?"), manifest.get("dataset_root"),
                        f"{counted(manifest.get('n_configs'), 'configuration')} × "
                        f"{counted(manifest.get('n_queries'), 'question')}")
    dataset = manifest.get("dataset") if isinstance(manifest.get("dataset"), dict) else {}
    config = manifest.get("config") if isinstance(manifest.get("config"), dict) else {}
    return RunOwner(kind, str(dataset.get("name") or "?"), dataset.get("hash"), eval_summary(config))


def counted(n: Any, noun: str) -> str:
    """``1 question``, ``2 questions``, ``? questions`` (not recorded)."""
    return f"{'?' if n is None else n} {noun}{'' if n == 1 else 's'}"


def eval_summary(config: dict[str, Any]) -> str:
    """``modes bm25,hybrid; 2 questions`` from a run manifest's config."""
    modes = ",".join(str(m) for m in config.get("modes") or [])
    count = config.get("questions", config.get("queries"))
    parts = [f"modes {modes}" if modes else "", counted(count, "question") if count else ""]
    if (config.get("split") or "all") != "all":
        parts.append(f"split {config['split']}")
    return "; ".join(p for p in parts if p)


def conflict(old: RunOwner, new: RunOwner, differences: Sequence[str] = ()) -> str | None:
    """Why ``new`` may not write where ``old`` is (``another dataset`` …), or None when it may."""
    if old.kind != new.kind:
        return "another kind of run"
    if old.dataset != new.dataset or (old.data and new.data and old.data != new.data):
        return "another dataset" if old.dataset != new.dataset else "another version of the dataset (other files)"
    if differences:
        return f"another configuration ({'; '.join(differences)})"
    return None


def changed(old: Mapping[str, Any], new: Mapping[str, Any], labels: Mapping[str, str]) -> list[str]:
    """``label: old → new`` for each key of ``labels`` whose value differs (two tables: each entry that
    differs, ``grid top_k: [3, 5] → [5]``); a key the old run did not record is not compared (a run
    folder from before it was recorded)."""
    differences = []
    for key, label in labels.items():
        if key not in old or old[key] == new.get(key):
            continue
        before, after = old[key], new.get(key)
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            differences += changed(before, after, {k: f"{label} {k}" for k in {**before, **after}})
        else:
            differences.append(f"{label}: {before!r} → {after!r}")
    return differences


def aside_folder(folder: Path, now: datetime | None = None) -> Path:
    """The timestamped sibling the old run is moved to (a free name: a suffix when taken)."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%d-%H%M%S")
    candidate = folder.with_name(f"{folder.name}.moved-{stamp}")
    n = 2
    while candidate.exists():
        candidate = folder.with_name(f"{folder.name}.moved-{stamp}-{n}")
        n += 1
    return candidate


def move_aside(folder: Path) -> Path:
    """Move every file of ``folder`` (its lock file aside: a writer may hold it) into a new timestamped
    sibling folder; returns that folder. Renames only: nothing is copied or deleted."""
    target = aside_folder(folder)
    target.mkdir(parents=True)
    for entry in sorted(folder.iterdir()):
        if entry.name != LOCK_FILE:
            entry.rename(target / entry.name)
    return target


def _message(folder: Path, old: RunOwner, new: RunOwner, why: str) -> str:
    return f"{folder} holds {old.describe()}; this is {new.describe()}: {why}"


def _hint(folder: Path, flag: str, resume: bool = False) -> str:
    # --resume continues the run in the folder and refuses --force: it must go before --force can move the run aside
    force = "drop --resume (resume=False) and add --force (force=True)" if resume else "add --force (force=True)"
    return (f"write to another {flag} folder ({flag.lstrip('-')}= in Python), or {force} to move the "
            f"old run to {folder.with_name(folder.name + '.moved-<UTC time>')} first (nothing is deleted)")


def claim_run_folder(folder: str | Path, owner: RunOwner, differences: Sequence[str] = (), *, force: bool = False,
                     flag: str = "--out", resume: bool = False) -> Path | None:
    """Check ``folder`` before ``owner``'s run writes into it: refuse another run there
    (:class:`RunFolderTakenError`, naming both), or with ``force`` move it aside. Returns the folder
    the old run was moved to, else None (no run there, or the same run, which the caller continues)."""
    folder = Path(folder)
    old = folder_owner(folder)
    why = None if old is None else conflict(old, owner, differences)
    if why is None:
        return None
    if force:
        moved = move_aside(folder)
        warn_at_caller(RagLabWarning(f"--force: moved {old.describe()} from {folder} to {moved} (nothing deleted)"))
        return moved
    raise RunFolderTakenError(_message(folder, old, owner, why), _hint(folder, flag, resume))


def folder_note(folder: str | Path, owner: RunOwner, differences: Sequence[str] = (), *, force: bool = False,
                flag: str = "--out", resume: bool = False) -> str | None:
    """:func:`claim_run_folder`'s verdict as one line, changing nothing (``--dry-run``); None when the
    run may simply write there."""
    folder = Path(folder)
    old = folder_owner(folder)
    why = None if old is None else conflict(old, owner, differences)
    if why is None:
        return None
    message = _message(folder, old, owner, why)
    if force:
        return f"{message}. --force: the old run would be moved to {aside_folder(folder)} (nothing deleted)."
    return f"{message}. The run would be refused: {_hint(folder, flag, resume)}."
