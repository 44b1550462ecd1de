"""What differs between two runs' set-ups, read from their manifests.

Each :class:`Facet` names one lever a reader thinks in ("embedding model") and the manifest fields
that hold it, as dotted paths (``models.embedding``) or patterns (``settings.judge_*``; a path also
covers everything below it). A field named exactly by one facet belongs to it; the rest go to the
first facet whose pattern matches; a field no facet claims and :data:`IGNORED` does not list is
still reported, under its own path — so a field added to the manifest is never silently skipped,
and giving it a name is one more row in :data:`FACETS`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any


@dataclass(frozen=True)
class Facet:
    label: str
    paths: tuple[str, ...]
    judge: bool = False  # a difference here changes what the judged metrics mean


FACETS: tuple[Facet, ...] = (
    Facet("dataset", ("dataset.name",)),
    Facet("dataset content", ("dataset.hash",)),
    Facet("question set", ("question_set", "config.question_set", "config.questions", "config.limit", "config.split")),
    Facet("chunking", ("settings.chunk_words", "settings.chunk_overlap_words")),
    Facet("embedding model", ("models.embedding", "settings.embed_*")),
    Facet("contextual variant", ("config.params.contextual",)),
    Facet("index fingerprint", ("config.index_fingerprint", "settings.vector_backend")),
    Facet("answer style", ("settings.answer_style", "config.params.answer_style")),
    Facet("retrieval configuration", ("config.params.*", "config.rerank", "config.context_lines",
                                      "settings.compress*")),
    Facet("generator", ("models.llm", "models.agent_llm", "settings.llm_*", "settings.agent_model",
                        "config.prompt_version")),
    Facet("judge", ("config.judge", "models.judge", "settings.judge_*"), judge=True),
    Facet("metrics computed", ("config.metrics",)),
    Facet("code commit", ("git_commit",)),
    Facet("package versions", ("packages",)),
)

# Where and when a run was made, not what shaped its scores; the modes are paired one by one.
IGNORED: tuple[str, ...] = ("created_at", "dataset.root", "dataset.kind", "settings.data_dir",
                            "settings.datasets_dir", "settings.models_dir", "config.modes", "config.conversations",
                            "python", "platform", "settings.request_timeout", "settings.max_retries",
                            "settings.max_consecutive_failures", "settings.llm_rpm", "settings.llm_concurrency",
                            "settings.kendra_*", "settings.aws_region",
                            "settings.qdrant_*")


@dataclass(frozen=True)
class Change:
    """One facet that differs: its label and each differing field's value in A and in B."""

    label: str
    fields: tuple[tuple[str, Any, Any], ...]
    judge: bool = False

    def brief(self, most: int = 2) -> str:
        """The label, with its fields when there are few (``retrieval configuration (config.params.top_k: — → 1)``)."""
        return f"{self.label} ({self.text()})" if len(self.fields) <= most else self.label

    def text(self) -> str:
        return "; ".join(f"{path}: {short_value(a)} → {short_value(b)}" for path, a, b in self.fields)


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``{"a": {"b": 1}}`` → ``("a.b", 1)``; lists and scalars are leaves; an empty mapping has
    none (``params: {}`` and ``params: {top_k: 1}`` differ in ``params.top_k`` alone)."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from flatten(inner, f"{prefix}.{key}" if prefix else str(key))
    elif prefix:
        yield prefix, value


def _covers(path: str, pattern: str) -> bool:
    """A plain path covers itself and everything below it; a pattern (``*``) matches as fnmatch does."""
    if "*" in pattern:
        return fnmatchcase(path, pattern)
    return path == pattern or path.startswith(pattern + ".")


def owner(path: str, facets: tuple[Facet, ...] = FACETS) -> Facet | None:
    """The facet a manifest field belongs to (plain paths first, then patterns), None if no facet names it."""
    for plain in (True, False):
        for facet in facets:
            if any(_covers(path, p) for p in facet.paths if ("*" not in p) == plain):
                return facet
    return None


def ignored(path: str) -> bool:
    return any(_covers(path, p) for p in IGNORED)


def differences(a: Mapping[str, Any], b: Mapping[str, Any], facets: tuple[Facet, ...] = FACETS) -> list[Change]:
    """Every facet in which manifest ``b`` differs from ``a``, in :data:`FACETS` order, then unnamed fields."""
    left, right = dict(flatten(a)), dict(flatten(b))
    grouped: dict[str, list[tuple[str, Any, Any]]] = {}
    judge_labels = {f.label for f in facets if f.judge}
    for path in sorted(set(left) | set(right)):
        if _canonical(left.get(path)) == _canonical(right.get(path)) or ignored(path):
            continue
        facet = owner(path, facets)
        label = facet.label if facet else path
        top = path.split(".", 1)[0]
        if top not in a or top not in b:  # a manifest written before the field existed: unknown, not changed
            label = f"{label} (not recorded in {'A' if top not in a else 'B'})"
        grouped.setdefault(label, []).append((path, left.get(path), right.get(path)))
    named = [f.label for f in facets]
    order = named + sorted(k for k in grouped if k not in set(named))
    return [Change(label, tuple(grouped[label]), label in judge_labels) for label in order if label in grouped]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def short_value(value: Any, limit: int = 60) -> str:
    """A manifest value as the page and the terminal show it (None: —)."""
    text = "—" if value is None else value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"
