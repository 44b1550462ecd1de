"""Which samples of two runs are the same question: pairing by question id, per mode.

Two runs of different question sets are refused (the counts on each side named) unless
``intersect``: then only the shared ids are compared and the pairing says how many were dropped.
Runs of two datasets are refused unless ``intersect`` finds ids they share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_lab.errors import ConfigError, one_of
from rag_lab.evaluate.store.frames import EvalRun


@dataclass(frozen=True)
class Pairing:
    """The questions compared: ``ids`` (shared, in A's order) and how many only one run holds."""

    modes: tuple[str, ...]
    ids: tuple[str, ...]
    only_a: int
    only_b: int

    @property
    def dropped(self) -> int:
        return self.only_a + self.only_b

    def text(self) -> str:
        if not self.dropped:
            return f"{len(self.ids)} questions paired by id"
        return (f"{len(self.ids)} shared questions paired by id (--intersect dropped {self.dropped}: "
                f"{self.only_a} only in A, {self.only_b} only in B)")


def dataset_name(run: EvalRun) -> str:
    dataset = run.manifest.get("dataset")
    return str(dataset.get("name", "?")) if isinstance(dataset, dict) else str(dataset or "?")


def question_ids(run: EvalRun, modes: Sequence[str]) -> list[str]:
    """Every question id the run holds in ``modes``, first seen first."""
    return list(dict.fromkeys(str(r["id"]) for mode in modes for r in run.records.get(mode, [])))


def shared_modes(run_a: EvalRun, run_b: EvalRun, wanted: Sequence[str] | None = None) -> tuple[str, ...]:
    """The modes both runs hold (``wanted``: those, each checked)."""
    in_a, in_b = list(run_a.records), list(run_b.records)
    both = [m for m in in_a if m in in_b]
    if wanted:
        missing = [m for m in wanted if m not in both]
        if missing:
            raise ConfigError(f"mode {one_of(missing)} is not in both runs (A: {', '.join(in_a)}; B: {', '.join(in_b)})",
                              f"pass --modes from {', '.join(both)}" if both else "compare runs of the same modes")
        return tuple(wanted)
    if not both:
        raise ConfigError(f"the runs share no mode (A: {', '.join(in_a)}; B: {', '.join(in_b)})",
                          "compare runs of the same modes")
    return tuple(both)


def pair(run_a: EvalRun, run_b: EvalRun, modes: Sequence[str], *, intersect: bool = False) -> Pairing:
    ids_a, ids_b = question_ids(run_a, modes), question_ids(run_b, modes)
    shared_set = set(ids_b)
    shared = [q for q in ids_a if q in shared_set]
    only_a, only_b = len(ids_a) - len(shared), len(ids_b) - len(shared)
    name_a, name_b = dataset_name(run_a), dataset_name(run_b)
    if name_a != name_b and not intersect:
        raise ConfigError(f"the runs are of two datasets (A: {name_a}, B: {name_b})",
                          "compare runs of one dataset, or pass --intersect to compare the question ids they share")
    if not shared:
        raise ConfigError(f"the runs share no question id (A: {len(ids_a)} questions of {name_a}, "
                          f"B: {len(ids_b)} of {name_b})", "compare runs of the same questions")
    if (only_a or only_b) and not intersect:
        raise ConfigError(f"the runs hold different questions: A {len(ids_a)} ({only_a} not in B), "
                          f"B {len(ids_b)} ({only_b} not in A), {len(shared)} shared",
                          "compare runs of the same questions (same --limit and --split), or pass --intersect "
                          "to compare the shared ones")
    return Pairing(tuple(modes), tuple(shared), only_a, only_b)
