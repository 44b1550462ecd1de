"""The small core — fusion, the ablation grid and its post-fusion step, the grid's metrics and the
statistics — imports and runs with numpy, scipy and ranx alone: no LlamaIndex, Qdrant, bm25s,
pydantic, RAGAS, model runtimes or notebook tools. In-process with those blocked (fast), and in
a fresh virtual environment holding only numpy, scipy and ranx (slow: it installs them)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

CORE = textwrap.dedent('''
    from rag_lab.evaluate.ablation.grid import Candidates, GridSpec, compute_grid
    from rag_lab.evaluate.ablation.metrics import ir_per_query
    from rag_lab.evaluate.statistics.significance import bootstrap_ci, holm, paired_test
    from rag_lab.fusion import explain_fusion, rank_fused

    legs = lambda ids: [(c, c.split("#")[0], 1.0 / r) for r, c in enumerate(ids, start=1)]
    question = Candidates("q", {"dense": legs(["a#1", "b#1", "a#2", "c#1"]), "bm25": legs(["b#1", "a#2", "c#1", "a#1"])})
    grid = compute_grid([question], GridSpec(modes=("fusion",), fusion_k=(1, 60), prefetch=(4,), top_k=(2, 3),
                                             max_per_doc=(0, 1)))
    assert len(grid.configs) == 8
    assert grid.chunks["fusion|k=60|p=4|w=1:1|top=3"]["q"] == ("b#1", "a#1", "a#2")  # 1/62+1/61 > 1/61+1/64 > …
    assert grid.chunks["fusion|k=60|p=4|w=1:1|top=2|cap=1"]["q"] == ("b#1", "a#1")
    assert grid.chunks["fusion|k=60|p=4|w=1:1|top=3|cap=1"]["q"] == ("b#1", "a#1", "c#1")  # a#2: the cap
    scores = ir_per_query(grid.docs, {"q": {"c": 1}}, cutoffs={c.id: c.top_k for c in grid.configs})
    assert scores["fusion|k=60|p=4|w=1:1|top=3|cap=1"]["recall@top_k"]["q"] == 1.0
    assert scores["fusion|k=60|p=4|w=1:1|top=2"]["recall@top_k"]["q"] == 0.0
    assert [i for i, _ in rank_fused(explain_fusion([("a", 1.0), ("b", 0.5)], [("b", 2.0)], 60))] == ["b", "a"]
    ci = bootstrap_ci([0.0, 1.0, 1.0, 0.0, 1.0], n_resamples=200)
    assert ci["ci_low"] <= ci["mean"] == 0.6 <= ci["ci_high"] and holm([0.01, 0.04]) == [0.02, 0.04]
    p, test = paired_test([0.0, 0.5, 0.2, 0.1, 0.3, 0.2, 0.1], [1.0, 0.9, 0.8, 0.7, 0.9, 0.8, 0.9])
    assert p < 0.05 and test
    print("core ok")
''')
# What the core must not import (ranx itself brings pandas, tqdm and rich).
HEAVY = ("llama_index", "qdrant_client", "qdrant_edge", "bm25s", "ragas", "pydantic", "pydantic_settings", "torch",
         "openvino", "onnxruntime", "llama_cpp", "boto3", "httpx", "openai", "ray", "jupyterlab", "papermill",
         "transformers", "sentence_transformers")
BLOCKER = textwrap.dedent(f'''
    import importlib.abc, sys

    class Blocked(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in {HEAVY!r}:
                raise ImportError(f"the core imported {{name}}")

    sys.meta_path.insert(0, Blocked())
''')


def _run(python: str, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-c", code], cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=600)


def test_the_core_imports_and_runs_with_the_heavy_libraries_blocked():
    done = _run(sys.executable, BLOCKER + CORE)
    assert done.returncode == 0 and "core ok" in done.stdout, done.stderr[-3000:]


@pytest.mark.slow  # installs numpy, scipy and ranx into a fresh virtual environment
def test_the_core_runs_in_a_venv_with_numpy_scipy_and_ranx_only(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "numpy", "scipy", "ranx"], capture_output=True,
                         text=True, timeout=1200)
    assert pip.returncode == 0, pip.stderr[-3000:]
    done = _run(str(venv / "bin" / "python"), CORE)
    assert done.returncode == 0 and "core ok" in done.stdout, done.stderr[-3000:]
