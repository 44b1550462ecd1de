"""Every notebook runs with papermill on small parameters (offline) and leaves no error cell; each is
committed without outputs and has a papermill ``parameters`` cell; its HTML export is self-contained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_lab.report.notebooks import check_self_contained, error_cells, execute, notebook_paths, to_html

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = notebook_paths(REPO / "notebooks")


def small_parameters(tmp: Path) -> dict[str, dict]:
    ablation = {"dataset": "texas_childcare", "fusion_k": [1, 60], "prefetch": [5, 10], "top_k": [3, 5],
                "limit": 5, "run_dir": str(tmp / "runs" / "nb-ablation")}
    return {
        "01_quickstart": {"modes": ["bm25", "hybrid"], "ask_modes": ["bm25", "hybrid"]},  # the CLI's top-k and top-n
        "02_mode_comparison": {"datasets": ["texas_childcare"], "modes": ["bm25", "hybrid"], "limit": 8,
                               "answer_limit": 0, "resamples": 200, "permutations": 200,
                               "run_dir": str(tmp / "runs" / "nb-modes")},
        "03_ablation_fusion_k": ablation,
        "04_ablation_prefetch_topk": ablation,
        "05_explain_hybrid": {},
        "06_failure_analysis": {"dataset": "texas_childcare", "modes": ["bm25", "hybrid"], "limit": 1, "worst_n": 1,
                                "run_dir": str(tmp / "runs" / "nb-failures")},
        "07_contextual_retrieval": {"dataset": "texas_childcare", "modes": ["bm25", "dense"], "resamples": 200},
        "08_synthetic_questions": {"dataset": "texas_childcare", "questions": str(question_file(tmp)), "results": "",
                                   "resamples": 100, "run_dir": str(tmp / "runs" / "nb-synthetic")},
    }


def question_file(tmp: Path) -> Path:
    """A FILE of synthetic-origin questions over texas_childcare's documents (its first 12 human ones, reworded)."""
    path = tmp / "texas_childcare.qa.synthetic.jsonl"
    if not path.exists():
        tmp.mkdir(parents=True, exist_ok=True)
        human = [json.loads(x) for x in (REPO / "datasets/texas_childcare/qa.jsonl").read_text().splitlines() if x][:12]
        path.write_text("".join(json.dumps({"id": f"synthetic-{i}", "question": f"Tell me: {h['question']}",
                                            "source_file": h["source_file"], "origin": "synthetic"}) + "\n"
                                for i, h in enumerate(human)))
    return path


def test_notebooks_are_committed_clean_and_parameterised():
    assert [p.stem for p in NOTEBOOKS][:1] == ["01_quickstart"]
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c["outputs"] and c["execution_count"] is None for c in code), f"{path.name} has outputs"
        assert any("parameters" in c.get("metadata", {}).get("tags", []) for c in code), f"{path.name}: no parameters cell"
        assert "subprocess" not in path.read_text() and "!rag-lab" not in path.read_text()  # Python API, not shell


def test_parameters_are_lower_case_and_notebooks_run_from_notebooks_or_the_root():
    import ast

    for path in NOTEBOOKS:
        nb = json.loads(path.read_text())
        code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
        [parameters] = ["".join(c["source"]) for c in nb["cells"]
                        if "parameters" in c.get("metadata", {}).get("tags", [])]
        names = [t.id for node in ast.parse(parameters).body if isinstance(node, ast.Assign) for t in node.targets]
        assert names and all(n == n.lower() for n in names), f"{path.name}: {names}"
        # paths in the notebooks are the repository root's: started from notebooks/, the first cell moves there
        assert any('if Path.cwd().name == "notebooks"' in c and "os.chdir(Path.cwd().parent)" in c
                   for c in code[1:2]), f"{path.name}: no move to the repository root before the first library call"


def parameters_of(path: Path) -> dict:
    """The literal values of a notebook's papermill ``parameters`` cell."""
    import ast

    nb = json.loads(path.read_text())
    [cell] = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    return {t.id: ast.literal_eval(node.value) for node in ast.parse("".join(cell["source"])).body
            if isinstance(node, ast.Assign) for t in node.targets}


def cli_levers() -> dict:
    """What `rag-lab` uses when a lever is not given: the API's defaults; rerank and compression as
    the command leaves them without a flag (None: the library's rule decides)."""
    from rag_lab import api
    from rag_lab.cli.main import build_parser

    defaults = api.defaults()
    ask = build_parser().parse_args(["ask", "texas_childcare", "a question"])
    return {"search_top_k": defaults["search_top_k"], "answer_top_k": defaults["answer_top_k"],
            "answer_top_n": defaults["answer_top_n"], "rerank": ask.rerank, "compress": None}


def test_quickstart_parameters_are_the_cli_defaults():
    from rag_lab import api
    from rag_lab.cli.ask import ask_modes

    params = parameters_of(REPO / "notebooks" / "01_quickstart.ipynb")
    levers = cli_levers()
    assert {name: params[name] for name in levers} == levers
    assert set(params["ask_modes"]) <= set(ask_modes()) and set(params["modes"]) <= set(api.IR_MODES)


def test_every_notebooks_levers_are_the_cli_defaults():
    from rag_lab.evaluate.ablation.grid import GridSpec

    grid = GridSpec()
    for path in NOTEBOOKS:
        params = parameters_of(path)
        assert "answer_chunks" not in params and "top_n" not in params, path.name
        assert {k: v for k, v in params.items() if k in cli_levers()} == {
            k: v for k, v in cli_levers().items() if k in params}, path.name
        if path.stem.startswith(("03_", "04_")):  # the ablation grid: `rag-lab ablate`'s axes
            axes = ("modes", "fusion_k", "prefetch", "top_k", "weights")
            assert [tuple(map(tuple, v)) if k == "weights" else tuple(v) for k, v in
                    ((k, params[k]) for k in axes)] == [getattr(grid, k) for k in axes], path.name


def test_every_notebook_ends_with_a_closing_summary():
    for path in NOTEBOOKS:
        *_, heading, summary = json.loads(path.read_text())["cells"]
        assert heading["cell_type"] == "markdown" and "".join(heading["source"]).startswith(
            "## What this notebook showed"), f"{path.name}: no closing summary"
        assert summary["cell_type"] == "code" and "print(" in "".join(summary["source"]), path.name


def test_every_notebook_has_small_test_parameters(tmp_path):
    assert {p.stem for p in NOTEBOOKS} == set(small_parameters(tmp_path))


@pytest.fixture(scope="module")
def notebook_env(texas_index, lab_settings, tmp_path_factory):
    """A data folder of its own (kernels are other processes; Qdrant's local mode allows one per
    folder), seeded with the session's parse and embedding caches so no PDF is parsed and nothing is
    embedded twice. The local model is the machine's (the models folder every data folder shares)."""
    from tests.conftest import BUILD_CACHES, copy_sqlite_files

    data = tmp_path_factory.mktemp("nb_data")
    copy_sqlite_files(Path(lab_settings.cache_dir), data / "cache", BUILD_CACHES)  # parsed pages and embeddings
    return data


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes_without_error_cells(notebook, notebook_env, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_LAB_DATA_DIR", str(notebook_env))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    executed = execute(notebook, tmp_path / notebook.name, small_parameters(notebook_env)[notebook.stem], cwd=REPO,
                       timeout=600)
    assert error_cells(executed) == []
    nb = json.loads(executed.read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert outputs, "the notebook ran but showed nothing"
    # no library progress bar or warning reaches the page (the library quiets them, as the CLI does)
    assert ["".join(o["text"]) for o in outputs if o.get("name") == "stderr"] == []
    closing = nb["cells"][-1]
    summary = "".join("".join(o["text"]) for o in closing["outputs"] if o.get("name") == "stdout")
    assert summary.strip(), "the closing summary printed nothing"
    if notebook.stem == "01_quickstart":  # the answers were made with `rag-lab ask`'s settings
        from rag_lab import api

        defaults = api.defaults()
        assert f"retriever top-k {defaults['answer_top_k']}, the LLM reads {defaults['answer_top_n']}" in summary
        assert f"bm25 {defaults['answer_top_n']} of " in summary  # what the answer's record says it read
        # the README's question, answered from the evidence in every mode the notebook asked
        asked = small_parameters(notebook_env)[notebook.stem]["ask_modes"]
        assert f"{len(asked)} of {len(asked)} answers state '$4,106' in their own statement" in summary, summary
    page = to_html(executed)
    assert check_self_contained(page) == []
    if notebook.stem in ("02_mode_comparison", "03_ablation_fusion_k", "04_ablation_prefetch_topk", "05_explain_hybrid",
                         "06_failure_analysis"):
        assert "data:image/png;base64," in page  # the plots are in the page
    if notebook.stem == "06_failure_analysis":  # RAGAS metrics scored inside the kernel's running event loop
        from rag_lab.evaluate import load_run

        run = load_run(small_parameters(notebook_env)[notebook.stem]["run_dir"])
        scored = run.summary[run.summary["metric"] == "key_fact_recall"]
        assert len(scored) == 2 and (scored["n"] > 0).all()  # one question, both modes


def test_a_parameter_no_notebook_declares_is_refused_before_any_runs(tmp_path, capsys):
    from rag_lab.report.notebooks import main

    code = main(["notebooks/05_explain_hybrid.ipynb", "--out", str(tmp_path), "-p", "top_kk", "3"])
    assert code == 2 and not any(tmp_path.iterdir())  # nothing executed, nothing written
    err = capsys.readouterr().err
    assert "unknown notebook parameter(s) top_kk (did you mean search_top_k for top_kk?)" in err
    assert "the notebooks take: dataset, keyword_queries, mode" in err
