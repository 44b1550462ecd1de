"""The runs under a folder (``runs/`` by default) as a history, newest first: when, which dataset and
questions, which modes, how many samples, the headline metrics, and what differs from the previous
run of the same dataset (:func:`rag_lab.evaluate.compare.facets.differences`).

A folder that holds no ``manifest.json`` is not a run and is left out; a run still being written
or one whose files are damaged is listed with that said, never dropped silently.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rag_lab.errors import ConfigError, RagLabError
from rag_lab.evaluate.compare.facets import differences
from rag_lab.evaluate.compare.scores import HEADLINE_METRICS
from rag_lab.evaluate.store.run_folder import MANIFEST, read_manifest
from rag_lab.evaluate.store.run_lock import lock_holder


@dataclass
class RunRow:
    path: str
    created_at: str
    dataset: str
    question_set: str
    modes: list[str]
    n: int
    headline: dict[str, dict[str, float]] = field(default_factory=dict)  # metric → mode → mean
    differs: list[str] | None = None  # None: no earlier run of this dataset
    state: str = "finished"
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("manifest")
        return out


def question_set_text(manifest: dict[str, Any]) -> str:
    """``split all, 4 questions`` (and the question set's origin where the manifest names one)."""
    config = manifest.get("config") or {}
    parts = []
    origin = manifest.get("question_set") or config.get("question_set")
    if origin:
        parts.append(str(origin.get("origin") or origin.get("name") or origin) if isinstance(origin, dict) else str(origin))
    parts.append(f"split {config.get('split') or 'all'}")
    if config.get("questions") is not None:
        parts.append(f"{config['questions']} questions")
    return ", ".join(parts)


def _row(folder: Path) -> RunRow:
    manifest = read_manifest(folder / MANIFEST, hint="re-run the command that wrote it")
    dataset = manifest.get("dataset")
    name = dataset.get("name", "?") if isinstance(dataset, dict) else str(dataset or "?")
    created = str(manifest.get("created") or manifest.get("created_at") or "")
    config = manifest.get("config") or {}
    row = RunRow(str(folder), created, name, question_set_text(manifest), [str(m) for m in config.get("modes") or []],
                 0, manifest=manifest)
    holder = lock_holder(folder)
    if holder is not None:
        row.state = f"being written (PID {holder})"
        return row
    if manifest.get("kind") in ("ablation", "ir"):
        row.state = f"{manifest['kind']} run"
        return row
    from rag_lab.evaluate.store.frames import load_run

    try:
        run = load_run(folder)
    except RagLabError as exc:
        row.state = f"damaged: {exc.message}"
        return row
    row.n = int(run.modes["samples"].max()) if len(run.modes) else 0
    summary = run.summary
    for metric in HEADLINE_METRICS:
        means = summary[summary["metric"] == metric]
        if len(means):
            row.headline[metric] = {str(r.mode): float(r.mean) for r in means.itertuples()}
    return row


def list_runs(folder: str | Path = "runs") -> list[RunRow]:
    """Every run folder directly under ``folder``, newest first."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder} is not a folder", "pass the folder holding your run folders (default runs/)")
    rows = [_row(child) for child in sorted(folder.iterdir()) if (child / MANIFEST).is_file()]
    rows.sort(key=lambda r: (r.created_at, r.path))
    previous: dict[str, RunRow] = {}
    for row in rows:  # oldest first: each run against the run of its dataset just before it
        before = previous.get(row.dataset)
        if before is not None:
            row.differs = [c.label for c in differences(before.manifest, row.manifest)]
        previous[row.dataset] = row
    return rows[::-1]
