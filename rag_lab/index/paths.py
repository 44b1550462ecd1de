"""Where one dataset's index files live under the data directory.

An index folder is keyed by the dataset's *resolved path*, not its name: ``docs`` in two
different places gets two indexes. The folder name is ``<name>-<sha10(resolved path)>``, with an
optional ``-<variant>`` suffix for index variants of the same source (e.g. contextual chunks).
Each backend commits its own manifest (``manifest-<backend>.json``) in that folder.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rag_lab.config import Settings

if TYPE_CHECKING:
    from rag_lab.datasets import Dataset

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def source_key(source: Path | str) -> str:
    """sha256 of the resolved path, first 10 hex digits."""
    return hashlib.sha256(str(Path(source).resolve()).encode("utf-8")).hexdigest()[:10]


def index_folder_name(name: str, source: Path | str, variant: str | None = None) -> str:
    """``<name>-<sha10(resolved source path)>[-<variant>]`` — the one place index folders are named."""
    safe = _UNSAFE.sub("_", name).strip("_") or "dataset"
    folder = f"{safe}-{source_key(source)}"
    if variant:
        if _UNSAFE.search(variant):
            raise ValueError(f"index variant must be letters, digits, '.', '_' or '-', got {variant!r}")
        folder += f"-{variant}"
    return folder


def backend_name(settings: Settings) -> str:
    """Which vector engine serves this lab: ``server`` when QDRANT_URL is set, else the embedded one."""
    if settings.qdrant_url:
        return "server"
    return getattr(settings, "vector_backend", "local")


@dataclass(frozen=True)
class IndexPaths:
    root: Path
    backend: str = "local"

    @classmethod
    def for_dataset(cls, settings: Settings, dataset: "Dataset", variant: str | None = None) -> "IndexPaths":
        folder = index_folder_name(dataset.name, dataset.root, variant)
        return cls(Path(settings.index_dir) / folder, backend_name(settings))

    @property
    def manifest(self) -> Path:
        return self.root / f"manifest-{self.backend}.json"

    @property
    def failure(self) -> Path:
        """Written when a build fails, removed by the next successful one."""
        return self.root / f"failed-{self.backend}.json"

    @staticmethod
    def legacy_manifest(settings: Settings, dataset: "Dataset") -> Path:
        """Where rag-lab ≤ 0.1 kept a dataset's manifest (keyed by name only)."""
        return Path(settings.index_dir) / dataset.name / "manifest.json"
