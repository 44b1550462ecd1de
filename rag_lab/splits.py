"""Declared dev splits: the questions that tuning may look at, listed in the dataset folder.

A dataset folder may hold ``dev_split.txt``: one question id per line (a line starting with ``#`` is a
comment).
Tuning (prompt, compression, retrieval levers) uses only those questions; benchmarks and reports
either leave them out or mark them, so a number that decided a design choice is never the number
that reports it.

Build one with ``rag-lab split DATASET`` (:mod:`rag_lab.cli.split`; a name or a folder path): about a third of the judged questions, drawn per
source document (so every document with questions has its share), seeded and deterministic; ids in
``--include`` (questions tuning already used) are always in it.

A ``--limit`` sample of questions (:func:`spread_by_source`, :func:`sample_judged`) is spread over
the source documents, so it is chosen here too.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

from rag_lab.errors import DatasetError

DEV_SPLIT_FILE = "dev_split.txt"


def dev_split_path(root: Path) -> Path:
    return Path(root) / DEV_SPLIT_FILE


def read_dev_split(root: Path) -> frozenset[str]:
    """The ids listed in ``root/dev_split.txt``; empty when the dataset declares none."""
    path = dev_split_path(root)
    return read_id_file(path) if path.is_file() else frozenset()


def read_id_file(path: Path) -> frozenset[str]:
    """One id a line; blank lines and lines starting with ``#`` skipped (ids themselves hold ``#``)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read the id list ({exc})", "one question id per line, UTF-8") from None
    return frozenset(s for line in text.splitlines() if (s := line.strip()) and not s.startswith("#"))


def split_ids(ids: list[str], dev: frozenset[str]) -> tuple[list[str], list[str]]:
    """``(dev, rest)``, each in the order of ``ids``."""
    return [i for i in ids if i in dev], [i for i in ids if i not in dev]


SPLITS = ("all", "dev", "rest")


def select_split(ids: list[str], dev: frozenset[str], split: str, dataset_name: str = "the dataset") -> list[str]:
    """``ids`` of the chosen part (``--split``): ``all``, the declared ``dev`` split or the ``rest``,
    in the order of ``ids``. A dataset without ``dev_split.txt`` has only ``all``."""
    if split not in SPLITS:
        raise DatasetError(f"unknown split {split!r}", f"choose from {', '.join(SPLITS)}")
    if split == "all":
        return list(ids)
    if not dev:
        raise DatasetError(f"{dataset_name} declares no dev split (no {DEV_SPLIT_FILE} in its folder), so "
                           f"--split {split} selects nothing",
                           f"use --split all, or write one: rag-lab split {dataset_name}")
    dev_ids, rest = split_ids(list(ids), dev)
    return dev_ids if split == "dev" else rest


def choose_dev_split(sources: dict[str, str], *, fraction: float = 1 / 3, seed: int = 0,
                     include: frozenset[str] = frozenset()) -> list[str]:
    """About ``fraction`` of ``sources``' ids (id → source document), the same share of every
    document (rounded, at least one of a document with two or more questions) and ``fraction`` of the
    documents that have a single question, drawn among them; ``include`` is always in, and counts
    towards its document's share."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction}")
    unknown = sorted(include - set(sources))
    if unknown:
        raise DatasetError(f"--include names ids the dataset does not have: {unknown[:5]}", "check the ids")
    by_source: dict[str, list[str]] = defaultdict(list)
    for qa_id in sorted(sources):
        by_source[sources[qa_id]].append(qa_id)
    rng = random.Random(seed)
    chosen: list[str] = []
    singles: list[str] = []  # the questions of documents that have only one
    for source in sorted(by_source):
        ids = by_source[source]
        if len(ids) == 1 and ids[0] not in include:
            singles.append(ids[0])
            continue
        want = max(round(len(ids) * fraction), 1 if len(ids) >= 2 else 0)
        forced = [i for i in ids if i in include]
        others = [i for i in ids if i not in include]
        rng.shuffle(others)
        chosen.extend(forced + others[:max(want - len(forced), 0)])
    # A third of one question rounds to none, so these are drawn together: without this a BEIR set, where
    # most queries have a document of their own, got a dev split of 40 of SciFact's 300 queries.
    rng.shuffle(singles)
    chosen.extend(singles[:round(len(singles) * fraction)])
    return sorted(chosen)


def write_dev_split(root: Path, ids: list[str], header: str) -> Path:
    path = dev_split_path(root)
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    path.write_text("\n".join(lines + sorted(ids)) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":  # the command moved to the CLI, which resolves names and paths alike
    raise SystemExit("the dev split is written by: rag-lab split DATASET (a name under the datasets folder or a "
                     "folder path; --fraction, --seed, --include as before)")


def sample_judged(queries: dict[str, str], qrels: dict[str, dict[str, int]],
                  limit: int | None) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """``queries`` and their ``qrels``, or with ``limit`` a sample of them spread over the relevant
    documents (:func:`spread_by_source`)."""
    if limit is not None:
        kept = spread_by_source(list(queries), {q: sorted(qrels[q]) for q in queries}, limit)
        queries = {q: queries[q] for q in kept}
    return queries, {q: qrels[q] for q in queries}


def spread_by_source(ids: list[str], sources: dict[str, list[str]], limit: int) -> list[str]:
    """The first ``limit`` ids of a round-robin over their first source document (documents in
    order of first appearance): Q&A files list a document's questions together, so the first 20
    lines of texas_childcare_full are all about one PDF. Every larger limit extends a smaller one,
    so a resumed run with a larger ``--limit`` keeps what it has."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a whole number ≥ 1, got {limit!r}")
    groups: dict[str, list[str]] = {}
    for i in ids:
        first = sources.get(i) or [""]
        groups.setdefault(first[0] or f"\x00{i}", []).append(i)  # no source: a group of its own
    ordered: list[str] = []
    for depth in range(max((len(g) for g in groups.values()), default=0)):
        ordered.extend(g[depth] for g in groups.values() if depth < len(g))
        if len(ordered) >= limit:
            break
    return ordered[:limit]
