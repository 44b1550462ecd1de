"""Where the test suite's CPU goes, per test file, on pytest-xdist workers (wall-clock ``--durations``
mislead there: a test that waits for a busy core looks long).

As a pytest plugin it records, for every test, the CPU seconds of the worker process and of the child
processes it waited for (notebook kernels, CLI subprocesses); Ray's daemons and actors are not its
children and are not counted (their test's wall time is shown beside)::

    make test PYTEST_ARGS="-p benchmarks.suite_cpu"            # writes .rag_lab/suite-cpu/cpu-<worker>.tsv
    .venv/bin/python -m benchmarks.suite_cpu [.rag_lab/suite-cpu] [--top 25]

The table: CPU seconds per file (own + children), its wall seconds summed over its tests, and each
worker's busy time, so one sees whether the workers finished together (balanced) and what to cut.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections import defaultdict
from pathlib import Path

import pytest

OUT = Path(os.environ.get("RAG_LAB_SUITE_CPU_DIR", ".rag_lab/suite-cpu"))
_rows: list[tuple[str, float, float, float]] = []


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    own0, children0 = _cpu()
    started = time.perf_counter()
    yield
    own1, children1 = _cpu()
    _rows.append((item.nodeid, own1 - own0, children1 - children0, time.perf_counter() - started))


def pytest_sessionfinish(session):
    if not _rows:
        return
    OUT.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    lines = "".join(f"{nodeid}\t{own:.2f}\t{children:.2f}\t{wall:.2f}\n" for nodeid, own, children, wall in _rows)
    (OUT / f"cpu-{worker}.tsv").write_text(lines, encoding="utf-8")


def table(folder: Path, top: int) -> str:
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    workers: dict[str, list[float]] = {}
    for path in sorted(folder.glob("cpu-*.tsv")):
        busy = [0.0, 0.0]
        for line in path.read_text(encoding="utf-8").splitlines():
            nodeid, own, children, wall = line.rsplit("\t", 3)
            row = files[nodeid.split("::")[0]]
            row[0] += float(own)
            row[1] += float(children)
            row[2] += float(wall)
            busy[0] += float(own) + float(children)
            busy[1] += float(wall)
        workers[path.stem.removeprefix("cpu-")] = busy
    if not files:
        raise SystemExit(f"no cpu-*.tsv in {folder}: run the tests with -p benchmarks.suite_cpu first")
    out = [f"{'CPU s':>8} {'own':>8} {'children':>8} {'wall s':>8}  file"]
    ranked = sorted(files.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
    for name, (own, children, wall) in ranked[:top]:
        out.append(f"{own + children:8.1f} {own:8.1f} {children:8.1f} {wall:8.1f}  {name}")
    total = sum(own + children for own, children, _ in files.values())
    out.append(f"{total:8.1f} CPU s in all ({len(files)} files; Ray's own processes not counted)")
    out += [f"worker {w}: busy {wall:.0f} s wall, {cpu:.0f} CPU s" for w, (cpu, wall) in workers.items()]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=str(OUT), help="where the plugin wrote cpu-<worker>.tsv")
    parser.add_argument("--top", type=int, default=25, help="files shown, most CPU first (default 25)")
    args = parser.parse_args()
    print(table(Path(args.folder), args.top))


if __name__ == "__main__":
    main()
