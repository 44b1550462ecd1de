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
    from rag_lab.errors import DatasetError, json_error_text

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
                raise DatasetError(f"{path}: line {line_no} is not JSON ({json_error_text(exc.msg)} at column {exc.colno}; "
                                   "the run folder is damaged)", hint) from None
            if not isinstance(record, dict) or "id" not in record:
                raise DatasetError(f"{path}: line {line_no} is not a sample record (no \"id\"; the run folder is damaged)",
                                   hint)
            if (problem := record_problem(record)) is not None:
                raise DatasetError(f"{path}: line {line_no} is not a sample record ({problem}; the run folder is "
                                   "damaged)", hint)
            records.append(record)
    return SamplesFile(path, records)


_NUMBER = (int, float)
# The fields of a sample record that tables, reports and --resume read, and the JSON types they hold
# (None is allowed for each: a failed step). A record of the wrong shape is damage named by file and
# line, not an AttributeError deep inside a report.
RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "id": (str, int), "mode": (str,), "question": (str,), "answer": (str,), "reference": (str,), "error": (str,),
    "scores": (dict,), "score_errors": (dict,), "contexts": (list,), "latency": (dict,), "usage": (dict,),
    "relevant": (dict,), "source_files": (list,), "citations": (dict,), "cost_usd": _NUMBER, "cached": (bool,),
    "dev_split": (bool,), "rescored": (int,),
}
_JSON_NAMES = {str: "a string", int: "a number", float: "a number", dict: "an object", list: "an array",
               bool: "true or false"}


def record_problem(record: dict[str, Any]) -> str | None:
    """What is wrong with a sample record's shape (``"scores" is a string, expected an object``), else None."""
    for key, types in RECORD_FIELDS.items():
        value = record.get(key)
        if value is None or (isinstance(value, types) and not (isinstance(value, bool) and bool not in types)):
            continue
        expected = " or ".join(dict.fromkeys(_JSON_NAMES[t] for t in types))
        return f"{key!r} is {_JSON_NAMES.get(type(value), type(value).__name__)}, expected {expected}"
    for key, types, what in (("scores", (*_NUMBER, type(None)), "a number or null"),
                             ("score_errors", (str,), "a string"), ("latency", (*_NUMBER, type(None)), "a number")):
        for name, value in (record.get(key) or {}).items():
            if not isinstance(value, types) or isinstance(value, bool):
                return f"{key}[{name!r}] is {_JSON_NAMES.get(type(value), 'null')}, expected {what}"
    if any(not isinstance(c, dict) for c in record.get("contexts") or []):
        return "'contexts' holds something other than objects"
    return None


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
    for section in ("config", "models", "settings"):  # read with .get(...) by every caller
        if data.get(section) is not None and not isinstance(data[section], dict):
            raise ConfigError(f"{path}: {section!r} is {type(data[section]).__name__}, expected a JSON object "
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
