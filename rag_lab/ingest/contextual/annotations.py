"""Path annotations: glob patterns over document paths → a sentence that situates every chunk.

``datasets/<name>/annotations.yaml``::

    # every pattern that matches a document contributes its sentence, in file order
    annotations:
      - pattern: "*"
        context: "A Texas Workforce Commission (TWC) child care document."
      - pattern: "bcy-26-*"
        context: "Board Contract Year 2026 (October 2025 to September 2026) chart."

Patterns are ``fnmatch`` globs (case-sensitive, ``*`` also crosses ``/``) matched against the
document path relative to the dataset's documents folder (the chunk's ``doc_id``). No LLM needed.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from rag_lab.errors import DatasetError

ANNOTATIONS_FILE = "annotations.yaml"
_FORMAT_HINT = 'the file must hold `annotations:` followed by a list of {pattern: "<glob>", context: "<sentence>"}'


@dataclass(frozen=True)
class Annotation:
    pattern: str
    context: str
    line: int  # 1-based line in the YAML file, for messages


@dataclass(frozen=True)
class PathAnnotations:
    rules: tuple[Annotation, ...]
    source: Path | None = None

    @classmethod
    def load(cls, path: Path | str) -> "PathAnnotations":
        """Parse and validate a YAML file; every error names the file and line and how to fix it."""
        path = Path(path)
        if not path.is_file():
            raise DatasetError(f"No annotations file at {path}", f"write one ({_FORMAT_HINT})")
        try:
            root = yaml.compose(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            raise DatasetError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})",
                               "fix the syntax at that line") from None
        return cls(tuple(_rules(path, root)), path)

    @classmethod
    def for_dataset(cls, dataset_root: Path) -> "PathAnnotations":
        return cls.load(Path(dataset_root) / ANNOTATIONS_FILE)

    def matches(self, doc_path: str) -> list[Annotation]:
        return [r for r in self.rules if fnmatch.fnmatchcase(doc_path, r.pattern)]

    def context_for(self, doc_path: str) -> str | None:
        """The sentences of every matching pattern, in file order, joined by a space."""
        sentences = [r.context for r in self.matches(doc_path)]
        return " ".join(sentences) if sentences else None

    def unmatched(self, doc_paths: Iterable[str]) -> list[str]:
        return [p for p in doc_paths if not self.matches(p)]

    def unused(self, doc_paths: Iterable[str]) -> list[Annotation]:
        """Patterns that match no document (usually a typo)."""
        paths = list(doc_paths)
        return [r for r in self.rules if not any(fnmatch.fnmatchcase(p, r.pattern) for p in paths)]


def _rules(path: Path, root) -> Iterable[Annotation]:
    def fail(node, problem: str):
        line = node.start_mark.line + 1 if node is not None else 1
        raise DatasetError(f"{path}:{line}: {problem}", _FORMAT_HINT)

    if not isinstance(root, yaml.MappingNode):
        fail(root, "expected a mapping with an `annotations:` list")
    entries = {k.value: v for k, v in root.value if isinstance(k, yaml.ScalarNode)}
    unknown = sorted(set(entries) - {"annotations"})
    if unknown:
        fail(root, f"unknown key(s) {', '.join(unknown)}")
    items = entries.get("annotations")
    if not isinstance(items, yaml.SequenceNode) or not items.value:
        fail(items or root, "`annotations:` must be a non-empty list")
    for item in items.value:
        if not isinstance(item, yaml.MappingNode):
            fail(item, "each entry must be a mapping with `pattern` and `context`")
        fields = {k.value: v for k, v in item.value if isinstance(k, yaml.ScalarNode)}
        extra = sorted(set(fields) - {"pattern", "context"})
        if extra:
            fail(item, f"unknown key(s) {', '.join(extra)} (only pattern and context)")
        values = {}
        for key in ("pattern", "context"):
            node = fields.get(key)
            if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
                fail(node or item, f"`{key}` is missing or empty")
            values[key] = " ".join(str(node.value).split())
        yield Annotation(values["pattern"], values["context"], item.start_mark.line + 1)
