"""Where one dataset's index files live under the data directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag_lab.config import Settings


@dataclass(frozen=True)
class IndexPaths:
    root: Path

    @classmethod
    def for_dataset(cls, settings: Settings, dataset_name: str) -> "IndexPaths":
        return cls(Path(settings.index_dir) / dataset_name)

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"
