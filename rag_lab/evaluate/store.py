"""A run folder: ``runs/<name>/<mode>/samples.jsonl`` (one line per finished sample) + ``manifest.json``.

Each line is appended and fsynced as soon as its sample is done, so a crash (even SIGKILL) loses
at most the sample in flight. A torn last line (killed mid-write) is ignored on read and cut off
before the next append, so a resumed run never holds a sample twice.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterator

SAMPLES = "samples.jsonl"
MANIFEST = "manifest.json"


def read_samples(path: Path) -> list[dict[str, Any]]:
    """The complete lines of a samples file (a torn last line is skipped)."""
    records = []
    if not Path(path).exists():
        return records
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            if not line.endswith("\n"):
                break  # torn write: the sample in flight when the process died
            if line.strip():
                records.append(json.loads(line))
    return records


class SampleLog:
    """Append-only JSONL of one mode's samples, keyed by sample id."""

    def __init__(self, folder: Path, *, resume: bool) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / SAMPLES
        if self.path.exists() and not resume:
            self.path.unlink()
        self._repair()
        self.done: dict[str, dict[str, Any]] = {r["id"]: r for r in read_samples(self.path)}

    def _repair(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with self.path.open("r+b") as handle:
                handle.truncate(keep)

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(_clean(record), ensure_ascii=False, default=_jsonable, allow_nan=False) + "\n"
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        self.done[record["id"]] = record

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.done.values())


def _clean(value: Any) -> Any:
    """Strict JSON: NaN and infinities become null (a failed score), numpy scalars plain numbers."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    return str(value)


def write_json_atomic(path: Path, data: Any) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    os.replace(tmp, path)
