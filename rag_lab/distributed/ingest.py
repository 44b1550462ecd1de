"""An index build's parsing and embedding on Ray: the same functions as a local build
(:func:`rag_lab.ingest.loaders.parse_pdf`, :func:`rag_lab.models.get_embed_model`), moved.

- Parsing: one task per PDF; the driver sends the file's bytes, so workers need no shared disk.
- Embedding: ``workers`` actors, each loading the embedding model once, embed the build's own
  batches (same texts, same batch boundaries: the same vectors as a local build).
At most ``workers`` files are in flight, so a large corpus is never all in the object store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from rag_lab.config import Settings
from rag_lab.distributed.cluster import RayCluster, import_ray
from rag_lab.errors import RagLabError
from rag_lab.index.build import BuildExecutor
from rag_lab.ingest.loaders import ParseResult


def _bounded(submit: Callable[[Any], Any], items: list[Any], in_flight: int) -> Iterator[Any]:
    """``submit(item)`` → object ref for every item, at most ``in_flight`` pending; yields each
    finished ref's value (with its item) in completion order."""
    ray = import_ray()
    pending: dict[Any, Any] = {}
    queue = iter(items)
    while True:
        while len(pending) < in_flight and (item := next(queue, _END)) is not _END:
            pending[submit(item)] = item
        if not pending:
            return
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            yield pending.pop(ref), ray.get(ref)


_END = object()


def _parse_task(data: bytes) -> ParseResult:
    from rag_lab.ingest.loaders import parse_pdf

    return parse_pdf(data)


class _Embedder:
    """A Ray actor: the configured embedding model, loaded once per actor."""

    def __init__(self, settings: Settings) -> None:
        from rag_lab.models import get_embed_model

        self.model = get_embed_model(settings)

    def embed(self, number: int, texts: list[str]) -> tuple[int, np.ndarray]:
        return number, np.asarray(self.model.get_text_embedding_batch(texts), dtype=np.float32)


@contextmanager
def ray_executor(cluster: RayCluster, settings: Settings) -> Iterator[BuildExecutor]:
    """Parsing and embedding of one build on ``cluster``, entered on first use (an up-to-date
    index, or one whose PDFs and embeddings are all cached, never starts Ray) and left at the end."""
    import_ray()  # a missing extra fails now, with its one-line fix, not after the parse-cache lookups
    entered = False

    def ray():
        nonlocal entered
        if not entered:
            cluster.__enter__()
            entered = True
        return import_ray()

    def parse_many(paths: list[Path]) -> Iterator[tuple[Path, ParseResult]]:
        parse = ray().remote(num_cpus=1, max_retries=2)(_parse_task)
        yield from _bounded(lambda path: parse.remote(path.read_bytes()), paths, cluster.worker_count)

    def embed_batches(batches: list[list[str]]) -> Iterator[tuple[int, np.ndarray]]:
        from ray.util import ActorPool

        embedder = ray().remote(num_cpus=1)(_Embedder)
        actors = [embedder.remote(settings) for _ in range(min(cluster.worker_count, len(batches)))]
        try:  # an idle actor takes the next batch; results come back as they finish
            yield from ActorPool(actors).map_unordered(lambda actor, item: actor.embed.remote(*item),
                                                       list(enumerate(batches)))
        except import_ray().exceptions.RayTaskError as exc:
            # the actor's ProviderError ("cannot reach the embedding server …") is the user's one line,
            # not the remote traceback Ray wraps it in
            if isinstance(exc.cause, RagLabError):
                raise exc.cause from None
            raise
        finally:
            for actor in actors:
                import_ray().kill(actor)

    try:
        yield BuildExecutor(parse_many=parse_many, embed_batches=embed_batches)
    finally:
        if entered:
            cluster.__exit__(None, None, None)
