"""The house is one-way: no module imports a higher floor, and no two files import each other
(directly or round a loop). Function-level imports count — they are still a dependency.

The floors match /work/shared/tools/import-graph.py (low to high); a new top-level module must be
given a floor here, which is the point: its place is decided, not found later.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rag_lab"

FLOORS = [
    {"errors", "tokenizer", "fusion", "background_loop", "concurrency", "schedule"},
    {"config", "progress"},
    {"models"},
    {"ingest"},
    {"datasets", "splits"},
    {"index"},
    {"retrieve"},
    {"answer"},
    {"evaluate"},
    {"report"},
    {"distributed"},
    {"cli", "warmup", "__main__", "api", "testing", "__init__"},
]
FLOOR = {name: level for level, names in enumerate(FLOORS) for name in names}


def _modules(root: Path) -> dict[Path, str]:
    return {p: ".".join((root.name, *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
            for p in root.rglob("*.py")}


def import_edges(root: Path = PACKAGE) -> dict[Path, set[Path]]:
    """File → the package's files it imports (``from X import name`` may name a module or an object)."""
    files = _modules(root)
    by_module = {m: p for p, m in files.items()}

    def resolve(name: str) -> Path | None:
        while name:
            if name in by_module:
                return by_module[name]
            name = name.rpartition(".")[0]
        return None

    edges: dict[Path, set[Path]] = {}
    for path in files:
        targets: set[Path] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                if name != root.name and not name.startswith(root.name + "."):
                    continue
                target = resolve(name)
                # a package's own __init__, imported from inside the package, is not a dependency
                if target is None or target == path or (target.name == "__init__.py" and target.parent in path.parents):
                    continue
                targets.add(target)
        edges[path] = targets
    return edges


def top_name(path: Path, root: Path = PACKAGE) -> str:
    return path.relative_to(root).parts[0].removesuffix(".py")


def upward_imports(edges: dict[Path, set[Path]], root: Path = PACKAGE) -> list[str]:
    found = []
    for path, targets in sorted(edges.items()):
        for target in sorted(targets):
            low, high = FLOOR.get(top_name(path, root)), FLOOR.get(top_name(target, root))
            if low is not None and high is not None and high > low:
                found.append(f"{path.relative_to(root)} ({top_name(path, root)}) -> "
                             f"{target.relative_to(root)} ({top_name(target, root)})")
    return found


def cycles(edges: dict[Path, set[Path]]) -> list[list[Path]]:
    """Strongly connected components of more than one file (Tarjan)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found: list[list[Path]] = []

    def visit(v: Path) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in list(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_every_top_level_module_has_a_floor():
    missing = sorted({top_name(p) for p in _modules(PACKAGE)} - set(FLOOR))
    assert not missing, f"give these a floor in FLOORS (and in shared/tools/import-graph.py): {missing}"


def test_no_module_imports_a_higher_floor():
    found = upward_imports(import_edges())
    assert not found, "upward imports:\n" + "\n".join(found)


def test_no_import_cycle_between_files():
    found = cycles(import_edges())
    assert not found, "import cycles:\n" + "\n".join(
        ", ".join(str(p.relative_to(PACKAGE)) for p in component) for component in found)


def test_the_checks_catch_an_upward_import_and_a_cycle(tmp_path):
    """The walker itself: a planted back arrow and a planted loop are both reported."""
    root = tmp_path / "rag_lab"
    (root / "ingest").mkdir(parents=True)
    (root / "evaluate").mkdir()
    for package in (root, root / "ingest", root / "evaluate"):
        (package / "__init__.py").write_text("", encoding="utf-8")
    (root / "ingest" / "a.py").write_text("def f():\n    from rag_lab.evaluate.b import g\n", encoding="utf-8")
    (root / "evaluate" / "b.py").write_text("from rag_lab.ingest.a import f\n", encoding="utf-8")
    (root / "evaluate" / "c.py").write_text("from rag_lab.ingest import a\n", encoding="utf-8")
    edges = import_edges(root)
    assert upward_imports(edges, root) == ["ingest/a.py (ingest) -> evaluate/b.py (evaluate)"]
    assert [[p.relative_to(root).as_posix() for p in c] for c in cycles(edges)] == [["evaluate/b.py", "ingest/a.py"]]
