"""Small on-disk inputs the tests build: a folder dataset, and a benchmark script loaded as a module."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_folder_dataset(root: Path, docs: Mapping[str, str], qa: Iterable[dict] | None = None,
                         dev: Iterable[str] | None = None) -> Path:
    """``root/dataset.json`` naming ``docs/`` (one file per ``docs`` entry, sub-paths allowed) and, when
    given, ``qa.jsonl`` (one JSON object a line) and ``dev_split.txt`` (one question id a line)."""
    root.mkdir(parents=True, exist_ok=True)
    spec = {"kind": "folder", "documents": "docs"}
    if qa is not None:
        spec["qa"] = "qa.jsonl"
    (root / "dataset.json").write_text(json.dumps(spec))
    for rel, text in docs.items():
        (root / "docs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / rel).write_text(text, encoding="utf-8")
    if qa is not None:
        write_qa(root, qa)
    if dev is not None:
        (root / "dev_split.txt").write_text("# dev\n" + "\n".join(dev) + "\n")
    return root


def write_qa(root: Path, lines: Iterable[dict]) -> None:
    (root / "qa.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def load_benchmark(name: str):
    """``benchmarks/<name>.py`` as a module (the benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module
