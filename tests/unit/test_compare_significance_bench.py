"""benchmarks/compare_significance.py measures what compare marks: a few seeds through the same code."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.compare_significance import METRICS, rates  # noqa: E402


def test_identical_runs_mark_nothing_and_a_large_effect_is_found():
    assert rates("identical", 3, 44, 0.8, METRICS)["fwer"] == 0.0
    row = rates("dense", 3, 240, 0.5, METRICS, effect=0.3)
    assert row["power"] == 1.0 and row["family"] == 24


def test_narrowed_metrics_make_a_smaller_family():
    row = rates("dense", 2, 240, 0.5, METRICS[:1], effect=0.3)
    assert row["family"] == 2 and row["power"] == 1.0
