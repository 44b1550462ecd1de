"""Query-focused extractive compression of the retrieved chunks (for small local models).

A 0.5–1.5B model on two cores reads ~1,400 prompt tokens per answer and still picks the wrong
cell of a 30-row table. Before the prompt is built, each chunk is cut to its lines that matter to
the question: every line of every chunk is scored with BM25 (the index's own
:class:`~rag_lab.tokenizer.DomainTokenizer`, so ``$4,106``, ``BCY 2026`` and ``family of 5``
meet their table rows) against the question; the best lines over all chunks (table rows, per table of each chunk, and
prose each by their own rule, :func:`select_lines`) are kept together with each chunk's first line (its
title), in their original order, and every run of dropped lines becomes ``…``. Chunks are never dropped or reordered, so ``[Doc N]`` numbers,
citations and reported sources stay those of the retriever. This is extractive selection in the
spirit of RECOMP / LongLLMLingua, without a second model.

Table rows carry their caption and column names since the PDF parser writes them as
self-describing lines (see :mod:`rag_lab.ingest.tables`), so a kept row is readable on its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from rag_lab.ingest.tables import CELL, SEPARATOR, parse_row
from rag_lab.tokenizer import DomainTokenizer

ELLIPSIS = "…"
DEFAULT_MAX_LINES = 12
# Table rows are parallel records: of each table (rows of one chunk sharing a caption) only its best-scoring
# rows are kept — the record the question's key term picks ("5" in "family of 5"), not the rest of
# the table, which shares the caption's words with the question. Prose lines are pieces of
# sentences whose evidence spreads over several: kept when they score at least PROSE_FLOOR × the
# best prose line, with PROSE_WINDOW neighbours each side. Chosen on a dev split of
# texas_childcare_full (questions outside the bench's): reference key facts still in the context
# 0.42 (one floor of 0.7 for all lines, one neighbour) → 0.70, at 43 % of the full chunks' length
# (benchmarks/offline_models.py reports this coverage).
PROSE_FLOOR = 0.3
PROSE_WINDOW = 2
# A table whose best score is shared by more than MAX_TIED_ROWS rows keeps none of them: the question's key
# term picked no record of it (its rows tie on the caption's and column's words), so it would come in
# whole — e.g. a "Maximum Parent Share of Cost | Family Size 7 … 15 | Bi-Weekly" page beside the page
# holding "Family Size 5" — and outweigh the row asked for (dense's "$287" in `make demo`). None = no
# limit (r2). Chosen on the dev split of texas_childcare_full (benchmarks/compression_sweep.py --tied-rows):
# docs/tuning.md.
MAX_TIED_ROWS: int | None = None
# Part of cached answers' keys (rag_lab.evaluate.plan.answering): change it with the selection rule.
# r2: a table is a caption within one chunk (r1 grouped rows by caption over all chunks, so the BCY26 and
# BCY25 board-rate pages competed as one table and one chunk could keep only its title).


def compression_rule(max_tied_rows: int | None) -> str:
    """The selection rule as cached answers' keys name it; a tied-rows limit is part of it (None keeps r2's name)."""
    rule = f"best rows per table of each chunk; prose >= {PROSE_FLOOR} x best, +-{PROSE_WINDOW} lines; r2"
    return rule if max_tied_rows is None else f"{rule}; tables with > {max_tied_rows} tied best rows dropped"


RULE = compression_rule(MAX_TIED_ROWS)


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


def select_lines(scores: np.ndarray, tables: Sequence[Hashable | None], chunk_of: Sequence[int], max_lines: int,
                 max_tied_rows: int | None | str = "default") -> set[int]:
    """Indices of the lines to keep (never one scoring 0). ``tables[k]`` names line k's table (its
    chunk and caption) for a table row, None for prose. Rows: each table's best-scoring rows (ties kept),
    none when more than ``max_tied_rows`` (default MAX_TIED_ROWS; None = no limit) share the best score.
    Prose: the best ``max_lines`` lines scoring at least PROSE_FLOOR × the best prose line, each
    with PROSE_WINDOW prose neighbours each side in the same chunk (PDF lines cut sentences)."""
    keep: set[int] = set()
    best_row: dict[Hashable, float] = {}
    for k, table in enumerate(tables):
        if table is not None and scores[k] > 0:
            best_row[table] = max(best_row.get(table, 0.0), scores[k])
    rows = [k for k, table in enumerate(tables) if table is not None and scores[k] > 0 and scores[k] == best_row[table]]
    limit = MAX_TIED_ROWS if max_tied_rows == "default" else max_tied_rows
    if limit is not None:
        tied = Counter(tables[k] for k in rows)
        rows = [k for k in rows if tied[tables[k]] <= limit]
    keep.update(sorted(rows, key=lambda k: (-scores[k], k))[:max_lines])
    prose = [k for k, table in enumerate(tables) if table is None and scores[k] > 0]
    if prose:
        least = PROSE_FLOOR * max(scores[k] for k in prose)
        for k in sorted((k for k in prose if scores[k] >= least), key=lambda k: (-scores[k], k))[:max_lines]:
            keep.update(j for j in range(k - PROSE_WINDOW, k + PROSE_WINDOW + 1)
                        if 0 <= j < len(scores) and tables[j] is None and chunk_of[j] == chunk_of[k])
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
    rows = [parse_row(line) for line in texts]
    # a row's table is its chunk and caption (first of two or more label parts; captionless rows of a
    # chunk form one group): the same caption in two chunks (two years' pages of one table) is two tables
    tables = [(i, row[0][0] if len(row[0]) > 1 else "") if row else None for (i, _, _), row in zip(flat, rows)]
    selected = select_lines(scores, tables, [i for i, _, _ in flat], max_lines)
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
