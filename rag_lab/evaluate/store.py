"""A run folder: ``runs/<name>/<mode>/samples.jsonl`` (one line per finished sample) + ``manifest.json``.

Each line is appended and fsynced as soon as its sample is done, so a crash (even SIGKILL) loses
at most the sample in flight. A torn last line (killed mid-write) is skipped on read (and shown as
"3 of 4 samples" in tables and reports) and cut off before the next append, so a resumed run never
holds a sample twice. Any other damaged line is an error naming the file and line.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

SAMPLES = "samples.jsonl"
MANIFEST = "manifest.json"


@dataclass
class SamplesFile:
    """What a samples file holds: its complete records and whether its last line was cut off."""

    path: Path
    records: list[dict[str, Any]]
    torn: bool = False  # the last line has no newline: the sample in flight when the process died

    @property
    def note(self) -> str | None:
        """One line for tables and reports when a cut-off line was skipped, else None."""
        if not self.torn:
            return None
        n = len(self.records)
        return (f"{n} of {n + 1} samples: the last line of {self.path} is cut off (a killed run) and was skipped; "
                "`rag-lab eval --resume` answers it again")


def scan_samples(path: Path) -> SamplesFile:
    """Read a samples file. A cut-off last line (killed mid-write) is skipped and flagged; any
    other bad line is damage: a :class:`DatasetError` naming the file and line, and what to do."""
    from rag_lab.errors import DatasetError

    path = Path(path)
    records: list[dict[str, Any]] = []
    if not path.exists():
        return SamplesFile(path, records)
    hint = ("remove or fix that line (with `rag-lab eval --resume` its sample is answered again), "
            "or start the run over without --resume")
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return SamplesFile(path, records, torn=bool(raw.strip()))
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise DatasetError(f"{path}: line {line_no} is not UTF-8 text (the run folder is damaged)", hint) from None
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}: line {line_no} is not JSON ({exc.msg} at column {exc.colno}; "
                                   "the run folder is damaged)", hint) from None
            if not isinstance(record, dict) or "id" not in record:
                raise DatasetError(f"{path}: line {line_no} is not a sample record (no \"id\"; the run folder is damaged)",
                                   hint)
            records.append(record)
    return SamplesFile(path, records)


def read_samples(path: Path) -> list[dict[str, Any]]:
    """The complete lines of a samples file (a torn last line is skipped; see :func:`scan_samples`)."""
    return scan_samples(path).records


def read_manifest(path: Path, *, hint: str) -> dict[str, Any]:
    """A run's ``manifest.json``; a damaged one is a :class:`ConfigError` naming the file, line and column."""
    from rag_lab.errors import ConfigError

    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: line {exc.lineno} column {exc.colno}: {exc.msg} (the run manifest is damaged)",
                          hint) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text (the run manifest is damaged)", hint) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: line 1: expected a JSON object, got {type(data).__name__} "
                          "(the run manifest is damaged)", hint)
    return data


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
