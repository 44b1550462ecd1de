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
