"""Query-focused extractive compression of the retrieved chunks (for small local models).

A 0.5–1.5B model on two cores reads ~1,400 prompt tokens per answer and still picks the wrong
cell of a 30-row table. Before the prompt is built, each chunk is cut to its lines that matter to
the question: every line of every chunk is scored with BM25 (the index's own
:class:`~rag_lab.tokenizer.DomainTokenizer`, so ``$4,106``, ``BCY 2026`` and ``family of 5``
meet their table rows) against the question, the best ``max_lines`` lines over all chunks are
kept together with each chunk's first line (its title), in their original order, and every run
of dropped lines becomes ``…``. Chunks are never dropped or reordered, so ``[Doc N]`` numbers,
citations and reported sources stay those of the retriever. This is extractive selection in the
spirit of RECOMP / LongLLMLingua, without a second model.

Table rows carry their caption and column names since the PDF parser writes them as
self-describing lines (see :mod:`rag_lab.ingest.tables`), so a kept row is readable on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from rag_lab.ingest.tables import CELL, SEPARATOR, parse_row
from rag_lab.tokenizer import DomainTokenizer

ELLIPSIS = "…"
DEFAULT_MAX_LINES = 12
# A line is kept only if it scores at least this share of the best line: the rows that differ
# from their neighbours by the question's key term ("5" in "family of 5") stand out; the rest of
# the table, sharing only its caption's words with the question, does not.
RELATIVE_FLOOR = 0.7


@dataclass(frozen=True)
class CompressionStats:
    """What the compression did, for the answer's metadata."""

    lines_before: int
    lines_kept: int
    chars_before: int
    chars_after: int


def _lines(node: NodeWithScore) -> list[str]:
    text = node.node.get_content(metadata_mode=MetadataMode.NONE)
    return [line.strip() for line in text.splitlines() if line.strip()]


def line_scores(query: str, lines: Sequence[str], tokenizer: DomainTokenizer | None = None) -> np.ndarray:
    """BM25 score of every line against ``query``, the lines being the corpus (their IDF)."""
    tokenizer = tokenizer or DomainTokenizer()
    corpus = tokenizer.batch(list(lines))
    query_tokens = [token for token in tokenizer(query) if token]
    if not any(corpus) or not query_tokens:
        return np.zeros(len(lines))
    bm25 = bm25s.BM25()
    bm25.index(corpus, show_progress=False)
    return np.asarray(bm25.get_scores(query_tokens), dtype=float)


def project_row(line: str, query_terms: set[str], tokenizer: DomainTokenizer) -> str:
    """A table row (:func:`rag_lab.ingest.tables.parse_row`) cut to the columns whose names share
    the most terms with the question ("bi-weekly" keeps ``Bi-Weekly``, not ``Weekly`` or
    ``Bi-Monthly``); unchanged when no column name is in the question, or for any other line."""
    row = parse_row(line)
    if row is None:
        return line
    labels, cells = row
    overlap = [len(set(tokenizer(name)) & query_terms) for name, _ in cells]
    best = max(overlap)
    if best == 0:
        return line
    kept = [f"{name}{CELL}{value}" for (name, value), hits in zip(cells, overlap) if hits == best]
    return SEPARATOR.join(labels + kept)


def select_lines(scores: np.ndarray, is_row: Sequence[bool], chunk_of: Sequence[int], max_lines: int) -> set[int]:
    """Indices of the lines to keep: the best ``max_lines`` scoring ≥ RELATIVE_FLOOR × the best,
    each prose line with its prose neighbours in the same chunk (PDF lines cut sentences; table
    rows stand alone)."""
    if not len(scores) or scores.max() <= 0:
        return set()
    floor = RELATIVE_FLOOR * scores.max()
    ranked = [k for k in sorted(range(len(scores)), key=lambda k: (-scores[k], k)) if scores[k] >= floor]
    keep: set[int] = set()
    for k in ranked[:max_lines]:
        keep.add(k)
        if not is_row[k]:
            keep.update(j for j in (k - 1, k + 1)
                        if 0 <= j < len(scores) and not is_row[j] and chunk_of[j] == chunk_of[k])
    return keep


def compress_nodes(nodes: Sequence[NodeWithScore], query: str, max_lines: int = DEFAULT_MAX_LINES,
                   tokenizer: DomainTokenizer | None = None) -> tuple[list[NodeWithScore], CompressionStats]:
    """``nodes`` with each text cut to its title line and its lines that matter to ``query``.

    Returns copies (the retriever's nodes are not modified) with the same ids, metadata and
    scores. Lines are selected over all chunks together (:func:`select_lines`), a line scoring 0
    (no term of the question) never; ties keep the earlier chunk's line (the retriever ranked it
    higher); table rows keep only the columns the question names (:func:`project_row`).
    """
    tokenizer = tokenizer or DomainTokenizer()
    per_node = [_lines(node) for node in nodes]
    flat = [(i, j, line) for i, lines in enumerate(per_node) for j, line in enumerate(lines)]
    texts = [line for _, _, line in flat]
    scores = line_scores(query, texts, tokenizer) if flat else np.zeros(0)
    is_row = [parse_row(line) is not None for line in texts]
    selected = select_lines(scores, is_row, [i for i, _, _ in flat], max_lines)
    keep = {(flat[k][0], flat[k][1]) for k in selected}
    query_terms = set(tokenizer(query))
    compressed: list[NodeWithScore] = []
    chars_after = lines_kept = 0
    for i, (node, lines) in enumerate(zip(nodes, per_node)):
        parts: list[str] = []
        for j, line in enumerate(lines):
            if j == 0 or (i, j) in keep:
                parts.append(project_row(line, query_terms, tokenizer))
                lines_kept += 1
            elif parts[-1] != ELLIPSIS:
                parts.append(ELLIPSIS)
        text = "\n".join(parts)
        chars_after += len(text)
        copy = node.node.model_copy() if isinstance(node.node, TextNode) else node.node
        if isinstance(copy, TextNode):
            copy.set_content(text)
        compressed.append(NodeWithScore(node=copy, score=node.score))
    stats = CompressionStats(lines_before=len(flat), lines_kept=lines_kept,
                             chars_before=sum(len(line) for line in texts), chars_after=chars_after)
    return compressed, stats
