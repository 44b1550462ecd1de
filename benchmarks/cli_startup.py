"""CLI start-up time: this tree's `rag-lab` against an earlier commit's, side by side.

    PYTHONPATH=. .venv/bin/python benchmarks/cli_startup.py                  # vs 40b75fb (eager imports)
    PYTHONPATH=. .venv/bin/python benchmarks/cli_startup.py --before main --runs 5 --commands

Each case runs in a fresh interpreter (`python -c "from rag_lab.cli import main; main()"`) with
PYTHONPATH set to the tree under test; the best of ``--runs`` wall times is reported (the least
disturbed by other load on the machine). ``--commands`` adds real searches on texas_childcare
(bm25: no model; dense: loads MiniLM), which need its index (`rag-lab index texas_childcare`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = "40b75fb"  # the last commit with eager CLI imports
RUNNER = "import sys; from rag_lab.cli import main; sys.exit(main(sys.argv[1:]))"
CASES = {
    "--help": ["--help"],
    "missing argument": ["search"],
    "bad --mode": ["search", "texas_childcare", "x", "--mode", "nope"],
}
COMMANDS = {
    "search bm25": ["search", "texas_childcare", "$4,106", "--mode", "bm25"],
    "search dense": ["search", "texas_childcare", "$4,106", "--mode", "dense"],
}


def export(ref: str, into: Path) -> Path:
    """``rag_lab/`` as of ``ref``, extracted under ``into``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "rag_lab"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _env(root: Path) -> dict[str, str]:
    # Run from a neutral folder (python -c puts the cwd first on sys.path); data and datasets stay the repo's.
    return {**os.environ, "PYTHONPATH": str(root),
            "RAG_LAB_DATA_DIR": os.environ.get("RAG_LAB_DATA_DIR", str(REPO / ".rag_lab")),
            "RAG_LAB_DATASETS_DIR": os.environ.get("RAG_LAB_DATASETS_DIR", str(REPO / "datasets"))}


def timed(root: Path, argv: list[str], runs: int, cwd: Path) -> tuple[float, int]:
    best, code = float("inf"), 0
    for _ in range(runs + 1):  # the best of runs + 1: the first also warms the OS file cache and .pyc files
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", RUNNER, *argv], cwd=cwd, env=_env(root), capture_output=True)
        best = min(best, time.perf_counter() - start)
        code = done.returncode
    return best, code


def which(root: Path, cwd: Path) -> str:
    done = subprocess.run([sys.executable, "-c", "import rag_lab; print(rag_lab.__file__)"], cwd=cwd, env=_env(root),
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BASELINE, help=f"git ref to compare with (default {BASELINE})")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--commands", action="store_true", help="also time real searches (needs the index)")
    args = parser.parse_args()
    cases = {**CASES, **(COMMANDS if args.commands else {})}
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cwd:
        before = export(args.before, Path(tmp))
        after = REPO
        for label, root in (("before", before), ("after", after)):
            found = which(root, Path(cwd))
            assert found.startswith(str(root)), f"{label}: rag_lab not imported from {root}: {found}"
        print(f"rag-lab start-up, best of {args.runs} runs (s): {args.before} vs this tree")
        print(f"{'case':<18}{'before':>10}{'after':>10}{'ratio':>9}  exit")
        for label, argv in cases.items():
            t_before, c_before = timed(before, argv, args.runs, Path(cwd))
            t_after, c_after = timed(after, argv, args.runs, Path(cwd))
            print(f"{label:<18}{t_before:>10.2f}{t_after:>10.2f}{t_before / t_after:>8.1f}x  {c_before}/{c_after}")


if __name__ == "__main__":
    main()
