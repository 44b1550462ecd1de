"""compare on real `eval` runs of texas_childcare (real index, retrieval and scoring; a generator
that quotes its chunks, so no model is loaded): a run against itself passes the gate, a run made
worse on purpose (`--top-k 1`: one chunk retrieved) fails it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real_runs(texas_index, lab_settings, tmp_path_factory):
    from rag_lab.evaluate import run_evaluation
    from tests.answer.conftest import ScriptedLLM
    from tests.evaluate.conftest import quoting_answer

    folder = tmp_path_factory.mktemp("compare-runs")
    llm = ScriptedLLM(script=quoting_answer, model_name="quoting-compare")
    # every question: with fewer, no paired test can reach α after Holm over every mode × metric
    run_evaluation("texas_childcare", lab_settings, ["hybrid"], folder / "default", progress=False, llm=llm)
    run_evaluation("texas_childcare", lab_settings, ["hybrid"], folder / "top1", progress=False, llm=llm, top_k=1)
    return folder / "default", folder / "top1"


def test_a_real_run_against_itself_passes_the_gate(lab_cli, real_runs):
    default, _ = real_runs
    code, out, _ = lab_cli("compare", str(default), str(default), "--fail-on-regression")
    assert code == 0, out
    assert "B does not differ from A in set-up; no significant difference" in out


def test_top_k_1_is_named_and_fails_the_gate(lab_cli, real_runs, tmp_path):
    default, top1 = real_runs
    code, out, _ = lab_cli("compare", str(default), str(top1), "--fail-on-regression",
                           "--out", str(tmp_path / "c.html"))
    assert code == 1, out
    assert out.startswith("B differs from A in: retrieval configuration (config.params.top_k: — → 1);")
    assert "REGRESSION hybrid context_key_fact_coverage" in out
    assert (tmp_path / "c.html").read_text(encoding="utf-8").count("<section") == 5


def test_the_runs_table_lists_both_newest_first(lab_cli, real_runs):
    default, top1 = real_runs
    code, out, _ = lab_cli("runs", str(default.parent))
    assert code == 0
    assert out.index(str(top1)) < out.index(str(default))
    assert "differs from the previous in: retrieval configuration" in out
