"""Where each backend keeps one build ("generation") of an index, and how to open, create and
clean them up.

- edge: a shard folder ``<index folder>/edge-<build id>/`` (per dataset, per build);
- local / server: a collection ``<index folder name>__<build id>`` in qdrant-client's store.

A build writes a new generation and then switches the manifest to it. Clean-up keeps the
generation the manifest named before the switch, so a process that read the old manifest a
moment ago can still open it; older ones are removed.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from rag_lab.config import Settings
from rag_lab.index.backend import VectorBackend, VectorWriter
from rag_lab.index.paths import IndexPaths

_BUILD_ID = r"[0-9a-f]{10}-\d+-[0-9a-f]{6}"


def generation_name(paths: IndexPaths, build_id: str) -> str:
    return f"edge-{build_id}" if paths.backend == "edge" else f"{paths.root.name}__{build_id}"


def create_writer(settings: Settings, paths: IndexPaths, location: str, dim: int) -> VectorWriter:
    if paths.backend == "edge":
        from rag_lab.index.edge import EdgeWriter

        paths.root.mkdir(parents=True, exist_ok=True)
        return EdgeWriter(paths.root / location, dim)
    from rag_lab.index.store import ClientWriter, cluster_layout, open_qdrant

    return ClientWriter(open_qdrant(settings), location, dim, cluster_layout(settings))


def open_backend(settings: Settings, paths: IndexPaths, location: str) -> VectorBackend:
    """The read side of one generation; edge shards are opened once per process and shared."""
    if paths.backend == "edge":
        from rag_lab.index.edge import shared_backend

        return shared_backend(paths.root / location)
    from rag_lab.index.store import ClientBackend, open_qdrant

    return ClientBackend(open_qdrant(settings), location, paths.backend)


def generation_exists(settings: Settings, paths: IndexPaths, location: str) -> bool:
    if paths.backend == "edge":
        return (paths.root / location / "segments").is_dir()
    from rag_lab.index.store import open_qdrant

    return open_qdrant(settings).collection_exists(location)


def generations(settings: Settings, paths: IndexPaths) -> list[str]:
    """Every generation of this index folder that exists, complete or not (sorted)."""
    if paths.backend == "edge":
        return sorted(p.name for p in paths.root.glob("edge-*") if re.fullmatch(f"edge-{_BUILD_ID}", p.name))
    from rag_lab.index.store import open_qdrant

    prefix = f"{paths.root.name}__"
    return sorted(c.name for c in open_qdrant(settings).get_collections().collections
                  if c.name.startswith(prefix) and re.fullmatch(_BUILD_ID, c.name.removeprefix(prefix)))


def remove_generations(settings: Settings, paths: IndexPaths, keep: set[str]) -> None:
    """Remove this index folder's generations not in ``keep`` (and their BM25 folders)."""
    for location in generations(settings, paths):
        if location in keep:
            continue
        if paths.backend == "edge":
            from rag_lab.index.edge import close_shared

            close_shared(paths.root / location)
            shutil.rmtree(paths.root / location, ignore_errors=True)
        else:
            from rag_lab.index.store import open_qdrant

            open_qdrant(settings).delete_collection(location)
    kept_ids = {re.search(_BUILD_ID, k).group(0) for k in keep if re.search(_BUILD_ID, k)}
    in_use = _bm25_dirs_named_by_manifests(paths.root)  # other backends' builds share this folder
    for folder in paths.root.glob("bm25-*"):
        if folder.name.removeprefix("bm25-") not in kept_ids and folder.name not in in_use:
            shutil.rmtree(folder, ignore_errors=True)


def _bm25_dirs_named_by_manifests(root: Path) -> set[str]:
    import json

    named = set()
    for manifest in root.glob("manifest-*.json"):
        try:
            named.add(json.loads(manifest.read_text(encoding="utf-8")).get("bm25_dir") or "")
        except (OSError, ValueError):
            continue  # unreadable: that backend's own commands report it
    return named
