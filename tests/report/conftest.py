"""A small real ablation run of texas_childcare, shared by the report tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def small_ablation(texas_index, lab_settings, tmp_path_factory):
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.ablation import run_ablation
    from rag_lab.evaluate.ablation.grid import GridSpec

    spec = GridSpec(modes=("fusion", "hybrid"), fusion_k=(1, 10, 60), prefetch=(5, 20), top_k=(3, 5),
                    default_prefetch=20)
    out = tmp_path_factory.mktemp("runs") / "texas-small"
    return run_ablation(resolve_dataset("texas_childcare", lab_settings.datasets_dir), lab_settings, spec, out,
                        limit=8, progress=False)


@pytest.fixture(scope="session")
def report_file(small_ablation, tmp_path_factory):
    from rag_lab.report.html import write_report

    return write_report(small_ablation.run_dir, tmp_path_factory.mktemp("reports") / "texas-small.html")


@pytest.fixture(scope="session")
def small_ir_run(texas_index, lab_settings, tmp_path_factory):
    """`rag-lab ir --out`: three modes over every judged texas_childcare question."""
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.retrieval.ir import evaluate_modes, write_ir_run

    dataset = resolve_dataset("texas_childcare", lab_settings.datasets_dir)
    report = evaluate_modes(dataset, lab_settings, ["bm25", "dense", "hybrid"], progress=False)
    return write_ir_run(report, dataset, lab_settings, tmp_path_factory.mktemp("runs") / "texas-ir")


@pytest.fixture(scope="session")
def small_eval_run(texas_index, lab_settings, tmp_path_factory):
    """`rag-lab eval` of three modes on four questions: a scripted generator that quotes its chunks, and
    a judge that replies unusably to every third prompt (so some judged scores fail, as in real runs)."""
    import json

    from rag_lab.evaluate import run_evaluation
    from tests.answer.conftest import ScriptedLLM
    from tests.evaluate.conftest import quoting_answer
    from tests.evaluate.test_judged_metrics import judge

    calls = {"n": 0}

    def flaky_judge(prompt: str) -> str:
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            return "no idea"
        try:
            return json.dumps(judge(prompt))
        except (AssertionError, KeyError, ValueError, IndexError):  # a prompt the rule judge does not know
            return "no idea"

    out = tmp_path_factory.mktemp("runs") / "texas-eval"
    run_evaluation("texas_childcare", lab_settings, ["bm25", "dense", "hybrid"], out, limit=4, progress=False,
                   llm=ScriptedLLM(script=quoting_answer), judge_llm=ScriptedLLM(script=flaky_judge, model_name="flaky"))
    return out
