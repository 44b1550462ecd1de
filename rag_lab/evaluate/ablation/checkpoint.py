"""The ablation's append-only JSONL caches (``legs.jsonl``, ``answers.jsonl``): read back safely.

A line cut by a crash (the file does not end with a newline) is dropped — that record is simply
recomputed. Any other line that is not a JSON object is damage the run must not paper over: one
clear error naming the file and line, and what to do.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rag_lab.errors import DatasetError, json_error_text


def read_records(path: Path, what: str, required: tuple[str, ...] = ()) -> list[dict]:
    """Every record of ``path`` (none when it does not exist); a cut last line is removed from the file."""
    if not path.exists():
        return []
    hint = (f"delete {path} (it only caches the run's {what}: the next run recomputes them), "
            f"or start a fresh run folder with --out")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise DatasetError(f"{path}: line {line}: not UTF-8 text (the ablation's {what} cache is damaged)",
                           hint) from None
    if text and not text.endswith("\n"):  # a line cut by a crash: drop it, that record is redone
        text = text[: text.rfind("\n") + 1]
        path.write_text(text, encoding="utf-8")
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}: line {number}: {json_error_text(exc.msg)} at column {exc.colno} "
                               f"(the ablation's {what} cache is damaged)", hint) from None
        missing = [k for k in required if not isinstance(record, dict) or k not in record]
        if missing:
            raise DatasetError(f"{path}: line {number}: not a {what} record (missing {', '.join(missing)})", hint)
        records.append(record)
    return records


def append_record(handle, record: dict, durable: bool = False) -> None:
    """One record per line, flushed at once (what a crash can lose is the line being written);
    ``durable``: also fsynced (a paid answer survives a power cut, not only a killed process)."""
    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    handle.flush()
    if durable:
        os.fsync(handle.fileno())
