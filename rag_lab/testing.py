"""rag-lab's regression gate inside pytest: a change fails its test suite when its run is
controlled-worse than the reference run (the same rule as ``rag-lab compare --fail-on-regression``).

    from rag_lab.testing import assert_no_regression

    def test_retrieval_did_not_get_worse():
        assert_no_regression("runs/main", "runs/candidate", metrics="ndcg@10:0.02,key_fact_recall")

or with the fixture (pytest finds it once ``pytest_plugins = ["rag_lab.testing"]`` is in a conftest.py)::

    def test_no_regression(no_regression):
        no_regression("runs/main", "runs/candidate")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable


class RegressionError(AssertionError):
    """Run B is significantly worse than run A (pytest reports it as a failed assertion)."""


def assert_no_regression(run_a: str | Path, run_b: str | Path, metrics: str | None = None, **compare: Any):
    """Raise :class:`RegressionError` (an ``AssertionError``) naming every controlled regression of B
    against A: significant under the lab's policy and, where ``metrics`` gives ``METRIC:DELTA``, a
    drop larger than DELTA. ``metrics``: ``--fail-on-regression``'s value (None: any compared metric).
    ``compare``: :func:`rag_lab.api.compare`'s keywords (modes, intersect, …). Returns the comparison."""
    from rag_lab.api import compare as compare_runs
    from rag_lab.evaluate.compare import gate

    rules = gate.parse_rules(metrics)
    result = compare_runs(run_a, run_b, **compare)
    compared = set(result.table["metric"])
    missing = [r.metric for r in rules if r.metric and r.metric not in compared]
    if missing:
        raise ValueError(f"metric {', '.join(missing)} is not compared; choose from {', '.join(sorted(compared))}")
    verdict = gate.check(result.table, rules)
    if verdict.failed:
        raise RegressionError("\n".join([result.verdict(), *verdict.lines]))
    return result


try:  # the fixture, for suites that load this module as a plugin; rag-lab itself needs no pytest
    import pytest
except ImportError:  # pragma: no cover
    pytest = None

if pytest is not None:
    @pytest.fixture
    def no_regression() -> Callable[..., Any]:
        """:func:`assert_no_regression`, as a fixture."""
        return assert_no_regression
