"""A person's verdicts on a run's answers: ``RUN/labels.jsonl``, one line per (sample, metric) verdict.

    {"sample_id": "…#Q1", "mode": "bm25", "metric": "faithful", "value": 1, "labeller": "ana",
     "time": "<ISO 8601, UTC>", "note": "…"}

``metric`` is ``faithful`` or ``correct`` (the judged metrics they measure: faithfulness, factual
correctness), ``value`` 1, 0 or ``"na"``. Lines are appended whole and fsynced (one ``write`` of a
line opened with O_APPEND), so a killed process leaves at most a cut last line, skipped on read. A
verdict given again by the same labeller replaces the earlier one (the later line wins); each
labeller's verdicts are kept apart. ``RUN/label_sample.json`` records the ``--budget`` draw (which
samples, and the stratum each was drawn from), so the estimator can weight it back.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

LABELS = "labels.jsonl"
LABEL_SAMPLE = "label_sample.json"
VALUES = {"1": 1, "0": 0, "na": "na"}
# label field → the judged metric it measures
LABEL_METRICS = {"faithful": "faithfulness", "correct": "factual_correctness"}


@dataclass(frozen=True)
class Label:
    sample_id: str
    mode: str
    metric: str  # faithful | correct
    value: int | str  # 1, 0 or "na"
    labeller: str
    time: str
    note: str = ""
    answer: str = ""  # answer_digest of the answer labelled: a verdict on an answer since replaced no longer counts

    @property
    def key(self) -> tuple[str, str]:
        return self.mode, self.sample_id


def parse_value(raw) -> int | str:
    """A form's or file's value as 1, 0 or "na"; anything else is refused."""
    text = str(raw).strip().lower()
    if text not in VALUES:
        raise ValueError(f"a label's value must be 1, 0 or na, got {raw!r}")
    return VALUES[text]


def answer_digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run_answers(records: dict[str, list[dict]]) -> dict[tuple[str, str], str]:
    """(mode, sample id) → the digest of its answer, for every sample of a run."""
    return {(mode, str(r["id"])): answer_digest(r.get("answer") or "") for mode, items in records.items() for r in items}


def read_labels(run: str | Path, known: dict[tuple[str, str], str] | None = None) -> list[Label]:
    """Every complete line of ``RUN/labels.jsonl`` (none: []). ``known``: the run's (mode, sample id) →
    answer digest (:func:`run_answers`) — a label naming any other sample is an error naming the file and
    line, as is a value outside 1/0/na or a metric other than faithful/correct; a label of an answer that
    has since been replaced (the run answered again) is left out."""
    from rag_lab.errors import DatasetError

    path = Path(run) / LABELS
    if not path.exists():
        return []
    hint = f"fix or remove that line of {path} (labels are one JSON object a line: sample_id, mode, metric, value, labeller)"
    labels = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n") or not raw.strip():
                continue  # a cut last line (a killed writer) or a blank one
            try:
                item = json.loads(raw.decode("utf-8"))
                label = Label(str(item["sample_id"]), str(item["mode"]), str(item["metric"]),
                              parse_value(item["value"]), str(item.get("labeller") or "unknown"),
                              str(item.get("time") or ""), str(item.get("note") or ""), str(item.get("answer") or ""))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                reason = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
                raise DatasetError(f"{path}: line {number} is not a label ({reason})", hint) from None
            if label.metric not in LABEL_METRICS:
                raise DatasetError(f"{path}: line {number}: unknown metric {label.metric!r} "
                                   f"(labels are {' or '.join(LABEL_METRICS)})", hint)
            if known is not None and label.key not in known:
                raise DatasetError(f"{path}: line {number} labels sample {label.sample_id!r} of mode {label.mode!r}, "
                                   "which this run does not hold", hint)
            if known is not None and label.answer and label.answer != known[label.key]:
                continue  # the answer labelled was replaced: this verdict is not about the answer there now
            labels.append(label)
    return labels


def latest(labels: list[Label]) -> dict[tuple[str, str, str, str], Label]:
    """(labeller, mode, sample id, metric) → that labeller's last verdict."""
    return {(label.labeller, label.mode, label.sample_id, label.metric): label for label in labels}


def append_labels(run: str | Path, labels: list[Label]) -> None:
    """Append verdicts as whole lines, fsynced (the caller holds the labelling lock)."""
    path = Path(run) / LABELS
    data = "".join(json.dumps(label.__dict__, ensure_ascii=False) + "\n" for label in labels).encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _cut_torn_tail(fd)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _cut_torn_tail(fd: int) -> None:
    """A last line without its newline (a killed writer) is cut off before the next append."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    tail = os.pread(fd, min(size, 65536), max(0, size - 65536))
    if not tail.endswith(b"\n"):
        keep = tail.rfind(b"\n")
        os.ftruncate(fd, 0 if keep < 0 and size <= 65536 else size - len(tail) + keep + 1)


def read_label_sample(run: str | Path) -> dict | None:
    """The ``--budget`` draw: {"budget", "seed", "drawn_by", "samples": [[mode, sample id], …] (drawn, in the
    order shown), "strata": [[mode, sample id, stratum], …] (every sample's)}."""
    path = Path(run) / LABEL_SAMPLE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
