"""Execute the parameterised notebooks (papermill) and export them to self-contained HTML.

nbconvert's stock ``lab``/``classic`` templates load require.js and MathJax from a CDN; the export
here renders cells with the ``basic`` template (no scripts) and wraps them in the report's inline
CSS, drops any script an output carries, and refuses to write a page that still references a
network location.

    python -m rag_lab.report.notebooks --out reports            # every notebook, default parameters
    python -m rag_lab.report.notebooks notebooks/03_ablation_fusion_k.ipynb -p limit 20
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import time
from pathlib import Path

NOTEBOOKS_DIR = Path("notebooks")
_SCRIPT = re.compile(r"<script\b.*?</script\s*>", re.IGNORECASE | re.DOTALL)
_REMOTE = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)
_CSS_IMPORT = re.compile(r"@import|url\(\s*['\"]?(?:https?:)?//", re.IGNORECASE)


def notebook_paths(folder: Path = NOTEBOOKS_DIR) -> list[Path]:
    return sorted(p for p in Path(folder).glob("[0-9][0-9]_*.ipynb"))


def execute(notebook: Path, output: Path, parameters: dict | None = None, cwd: Path | None = None,
            kernel_name: str = "python3", timeout: int | None = None) -> Path:
    """Run ``notebook`` with papermill (its ``parameters`` cell overridden) into ``output``.
    Raises papermill's ``PapermillExecutionError`` on the first error cell."""
    import papermill as pm

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    pm.execute_notebook(str(notebook), str(output), parameters=parameters or {}, cwd=str(cwd) if cwd else None,
                        kernel_name=kernel_name, progress_bar=False, log_output=False,
                        execution_timeout=timeout, config=kernel_config())
    return output


def kernel_config():
    """The kernels this machine starts for itself talk over IPC (Unix sockets beside their connection
    file), not TCP: nothing listens on a port, and the kernel has no "running over TCP without
    encryption" warning to print. Windows has no IPC transport: TCP there."""
    import os

    from traitlets.config import Config

    config = Config()
    if os.name != "nt":
        config.KernelManager.transport = "ipc"
    return config


def error_cells(notebook: Path) -> list[str]:
    """Error outputs left in an executed notebook (empty when every cell ran cleanly)."""
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)
    errors = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                errors.append(f"{output.get('ename')}: {output.get('evalue')}")
    return errors


def to_html(notebook: Path, title: str | None = None) -> str:
    """A self-contained HTML page of an executed notebook (inline CSS, images as base64, no script)."""
    import nbformat
    from nbconvert import HTMLExporter

    from rag_lab.report.html import CSS

    nb = nbformat.read(str(notebook), as_version=4)
    for cell in nb.cells:  # outputs that are code for a browser (widgets, JS) are not kept
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data:
                for mime in [m for m in data if "javascript" in m or m.startswith("application/vnd.jupyter.widget")]:
                    del data[mime]
    exporter = HTMLExporter(template_name="basic")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(nb)
    body = _SCRIPT.sub("", body)
    title = title or Path(notebook).stem
    extra = (".jp-Cell,.cell{margin:10px 0}.jp-InputArea-editor,.input_area,div.highlight{background:#f3f5f7;"
             "padding:6px 10px;overflow-x:auto}.jp-OutputArea-output img,.output img{max-width:100%}"
             "pre{margin:0}.dataframe{font-size:12px}")
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}{extra}</style></head><body><main>"
            f"<h1>{html.escape(title)}</h1>{body}</main></body></html>\n")
    problems = check_self_contained(page)
    if problems:
        raise ValueError(f"{notebook}: the exported page still references the network: {problems[:3]}")
    return page


def check_self_contained(page: str) -> list[str]:
    """Everything in an HTML page that would make a browser reach out: scripts, remote src/href, CSS imports."""
    problems = [m.group(0)[:80] for m in re.finditer(r"<script\b[^>]*>", page, re.IGNORECASE)]
    problems += [page[m.start(): m.start() + 80] for m in _REMOTE.finditer(page)]
    problems += [page[m.start(): m.start() + 80] for m in _CSS_IMPORT.finditer(page)]
    return problems


def declared_parameters(notebook: Path) -> list[str]:
    """The names ``notebook``'s parameters cell assigns (papermill reads them without running it)."""
    import papermill as pm

    return list(pm.inspect_notebook(str(notebook)))


def check_parameters(notebooks: list[Path], parameters: dict) -> None:
    """Refuse a parameter that none of ``notebooks`` declares: papermill would only log it and run the
    defaults, so a misspelt name would quietly give another notebook than the one asked for."""
    import difflib

    declared = sorted({name for notebook in notebooks for name in declared_parameters(notebook)})
    unknown = [name for name in parameters if name not in declared]
    if unknown:
        close = {name: difflib.get_close_matches(name, declared, n=1, cutoff=0.5) for name in unknown}
        guesses = "; ".join(f"did you mean {close[name][0]} for {name}?" for name in unknown if close[name])
        raise ValueError(f"unknown notebook parameter(s) {', '.join(unknown)}" + (f" ({guesses})" if guesses else "")
                         + f"; the notebooks take: {', '.join(declared)}")


def run_all(notebooks: list[Path], out_dir: Path, parameters: dict | None = None, executed_dir: Path | None = None,
            cwd: Path | None = None) -> list[Path]:
    """Execute each notebook and export it to ``out_dir/<name>.html``; prints each path. Each notebook gets
    the ``parameters`` it declares (one value may serve several notebooks); a name none declares is refused."""
    out_dir = Path(out_dir)
    executed_dir = Path(executed_dir or out_dir / "executed")
    parameters = parameters or {}
    check_parameters(notebooks, parameters)
    written = []
    for notebook in notebooks:
        started = time.perf_counter()
        own = {name: value for name, value in parameters.items() if name in declared_parameters(notebook)}
        executed = execute(notebook, executed_dir / notebook.name, own, cwd=cwd)
        page = out_dir / f"{notebook.stem}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(to_html(executed), encoding="utf-8")
        print(f"{notebook.name}: {time.perf_counter() - started:.0f}s → {page}", flush=True)
        written.append(page)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag_lab.report.notebooks", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN_*.ipynb")
    parser.add_argument("--out", type=Path, default=Path("reports"))
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "JSON"),
                        help="override a parameter (value parsed as JSON, else a string)")
    args = parser.parse_args(argv)
    parameters = {}
    for name, value in args.parameter:
        try:
            parameters[name] = json.loads(value)
        except json.JSONDecodeError:
            parameters[name] = value
    notebooks = args.notebooks or notebook_paths()
    if not notebooks:
        print("error: no notebooks found under notebooks/", file=sys.stderr)
        return 2
    try:
        check_parameters(notebooks, parameters)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    run_all(notebooks, args.out, parameters, cwd=Path.cwd())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
