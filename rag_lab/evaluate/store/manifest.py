"""The run manifest: what produced a run folder (config, versions, data, models, git commit)."""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.questions.question_set import question_set

PACKAGES = ("rag-lab", "llama-index-core", "ragas", "ranx", "qdrant-client", "qdrant-edge-py", "bm25s", "xllamacpp",
            "sentence-transformers", "torch", "openai", "boto3", "pandas")


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def dataset_hash(dataset: Dataset) -> str:
    """SHA-256 over the corpus files and the question file (names and bytes)."""
    digest = hashlib.sha256()
    files = list(dataset.corpus_files) + ([dataset.qa_file] if dataset.has_qa else [])
    for extra in (getattr(dataset, "queries_file", None), getattr(dataset, "qrels_file", None)):
        if extra is not None and Path(extra).exists():
            files.append(Path(extra))
    for path in files:
        digest.update(Path(path).name.encode())
        with Path(path).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def git_commit(cwd: Path | None = None) -> str | None:
    root = cwd or Path(__file__).resolve().parents[3]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def settings_record(settings: Settings) -> dict[str, Any]:
    """The settings without secrets (keys are SecretStr and are left out entirely)."""
    data = settings.model_dump(mode="json")
    return {k: v for k, v in data.items() if "key" not in k.lower()}


def build_manifest(*, dataset: Dataset, settings: Settings, config: dict[str, Any],
                   models: dict[str, Any]) -> dict[str, Any]:
    return {
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "dataset": {"name": dataset.name, "kind": dataset.kind, "root": str(dataset.root), "hash": dataset_hash(dataset)},
        "question_set": question_set(dataset).as_dict(),
        "config": config,
        "settings": settings_record(settings),
        "models": models,
        "packages": package_versions(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "git_commit": git_commit(),
    }
