"""The regression gate, from the CLI (exit codes, why) and from pytest (`assert_no_regression`)."""

from __future__ import annotations

import json

import pytest

from rag_lab.errors import ConfigError
from rag_lab.evaluate.compare.gate import Rule, parse_rules
from rag_lab.testing import RegressionError, assert_no_regression
from tests.evaluate.compare.builders import manifest, scores, write_run

N = 20


@pytest.fixture
def runs(tmp_path):
    a = write_run(tmp_path / "a", scores(N, lambda i: 0.8 + 0.01 * (i % 3)))
    b = write_run(tmp_path / "b", scores(N, lambda i: 0.7 + 0.01 * (i % 3)), manifest(**{"config.params": {"top_k": 1}}))
    return str(a), str(b)


def test_rules_are_parsed_and_bad_ones_refused():
    assert parse_rules(None) == [Rule(None)] and parse_rules("") == [Rule(None)]
    assert parse_rules("ndcg@10:0.02, rouge_l") == [Rule("ndcg@10", 0.02), Rule("rouge_l", 0.0)]
    for bad in ("ndcg@10:x", "ndcg@10:-1", ":0.1"):
        with pytest.raises(ConfigError, match="is not METRIC"):
            parse_rules(bad)


def test_compare_run_run_passes_the_gate(lab_cli, runs):
    a, _ = runs
    code, out, _ = lab_cli("compare", a, a, "--fail-on-regression")
    assert code == 0
    assert "B does not differ from A in set-up" in out and "regression gate: passed" in out


def test_a_worse_run_fails_the_gate_saying_why(lab_cli, runs):
    a, b = runs
    code, out, _ = lab_cli("compare", a, b, "--fail-on-regression")
    assert code == 1
    assert "REGRESSION hybrid ndcg@10: -0.100" in out and "regression gate: FAILED" in out
    assert "B differs from A in: retrieval configuration" in out


def test_a_tolerance_larger_than_the_drop_passes(lab_cli, runs):
    a, b = runs
    code, out, _ = lab_cli("compare", a, b, "--fail-on-regression", "ndcg@10:0.2")
    assert code == 0 and "ok ndcg@10 (drop > 0.2): significant drops within the tolerance" in out
    code, out, _ = lab_cli("compare", a, b, "--fail-on-regression", "ndcg@10:0.05")
    assert code == 1 and "beyond the tolerance 0.05" in out


def test_the_better_direction_is_no_regression(lab_cli, runs):
    a, b = runs
    code, out, _ = lab_cli("compare", b, a, "--fail-on-regression")
    assert code == 0 and "▲ sig." in out


def test_bad_input_exits_2_with_one_line(lab_cli, runs, tmp_path):
    a, b = runs
    code, _, err = lab_cli("compare", a, b, "--metrics", "mrr@5")
    assert code == 2 and "metric mrr@5 is in neither run" in err and "choose from" in err
    code, _, err = lab_cli("compare", a, b, "--fail-on-regression", "mrr@5")
    assert code == 2 and "not compared" in err
    code, _, err = lab_cli("compare", a, str(tmp_path))
    assert code == 2 and "is not a run folder" in err


def test_json_holds_the_gate_and_the_differences(lab_cli, runs, tmp_path):
    a, b = runs
    code, out, _ = lab_cli("compare", a, b, "--json", "--fail-on-regression")
    data = json.loads(out)
    assert code == 1 and data["gate"]["failed"] is True
    assert data["changes"][0]["facet"] == "retrieval configuration"
    assert {r["metric"] for r in data["differences"]} == {"ndcg@10", "rouge_l"}
    assert all(r["significant"] is True and r["delta"] == pytest.approx(-0.1) for r in data["differences"])
    assert data["significance"]["family"] == 4


def test_the_pytest_helper_fails_on_a_regression_and_passes_otherwise(runs):
    a, b = runs
    with pytest.raises(RegressionError, match="REGRESSION hybrid ndcg@10"):
        assert_no_regression(a, b)
    with pytest.raises(AssertionError):  # what pytest reports as a failed test
        assert_no_regression(a, b, metrics="rouge_l:0.05")
    assert assert_no_regression(a, a).family == 4
    assert assert_no_regression(a, b, metrics="ndcg@10:0.2", modes="hybrid").pairing.modes == ("hybrid",)


@pytest.mark.slow
def test_a_ci_suite_using_the_fixture_fails_on_a_regression(runs, tmp_path):
    """The documented CI use: a test file in another project, the fixture loaded as a plugin."""
    import os
    import subprocess
    import sys

    a, b = runs
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text('pytest_plugins = ["rag_lab.testing"]\n')
    (suite / "test_gate.py").write_text(
        f"def test_same(no_regression):\n    no_regression({a!r}, {a!r})\n\n"
        f"def test_worse(no_regression):\n    no_regression({a!r}, {b!r}, metrics='ndcg@10')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite)],
                          capture_output=True, text=True, cwd=suite, env=env, timeout=600)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "1 failed, 1 passed" in done.stdout and "REGRESSION hybrid ndcg@10" in done.stdout


def test_a_gate_that_cannot_fail_says_so(lab_cli, tmp_path):
    """Three questions: the smallest paired p is 0.25, so nothing can be significant — the gate passes
    and says it could not have failed."""
    a = write_run(tmp_path / "a3", scores(3, lambda i: 0.9))
    b = write_run(tmp_path / "b3", scores(3, lambda i: 0.1), manifest(**{"config.params": {"top_k": 1}}))
    code, out, _ = lab_cli("compare", str(a), str(b), "--fail-on-regression")
    assert code == 0
    assert "the smallest p a paired test can give is 0.25" in out
    assert "regression gate: passed (it could not fail: too few questions to tell, see the notes)" in out
