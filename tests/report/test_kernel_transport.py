"""A notebook's kernel talks over IPC: its output is the notebook's, and it prints no "running over TCP
without encryption" warning (notebook 01's first line of stderr)."""

from __future__ import annotations

import json

import pytest

from rag_lab.report.notebooks import execute

pytestmark = pytest.mark.slow  # a kernel starts

NOTEBOOK = {"cells": [{"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]}, "source": "x = 1",
                       "outputs": [], "execution_count": None},
                      {"cell_type": "code", "id": "c", "metadata": {}, "source": "print(x + 1)", "outputs": [],
                       "execution_count": None}],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def test_the_kernel_runs_without_the_tcp_warning(tmp_path, capfd):
    (tmp_path / "n.ipynb").write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    out = execute(tmp_path / "n.ipynb", tmp_path / "out.ipynb", parameters={"x": 41}, cwd=tmp_path)
    cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
    assert cells[-1]["outputs"][0]["text"] == ["42\n"]
    assert "without encryption" not in capfd.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.ipynb", "out.ipynb"]  # no socket files left here
