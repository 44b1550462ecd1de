"""Evidence for an answer, chosen line by line from the retrieved chunks by retrieval-grade scorers.

The chunks a retriever returns hold the answer in one or two of their ~40 lines. Every line becomes
a candidate *unit*:

- a **table row** as the PDF parser wrote it (caption and column names on the row,
  :mod:`rag_lab.ingest.tables`), or, for a table the parser did not detect (a line that is mostly
  figures), the row behind the nearest line above it that is mostly words (its header);
- a **sentence window** for prose: the line together with the lines the PDF broke its sentence
  over (back to the line after the previous sentence's end, on to the line that ends it, at most
  :data:`WINDOW_BACK` lines back and :data:`WINDOW_AHEAD` ahead).

Each unit is scored twice — BM25 against the question (the index's own
:class:`~rag_lab.tokenizer.DomainTokenizer`, the units being the corpus) and the cosine of the
retriever's embedding model (MiniLM, loaded already: the units are embedded in one batch) — and the
two rankings are fused by reciprocal rank (:func:`rag_lab.fusion.rrf.rrf_fuse`). The best units
that do not repeat a line already taken are the evidence, each with the chunk (``[Doc N]``) and
line numbers it came from. Chosen on the dev split of texas_childcare_full by the share of the
reference answers' key facts the selected evidence states (benchmarks/evidence_coverage.py,
docs/answering.md). The reordering of :mod:`rag_lab.answer.evidence_order` covers more key facts on
dev but its answers were no better (recall the same, precision halved): measured, not taken.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from llama_index.core.schema import MetadataMode, NodeWithScore

from rag_lab.answer.compress import line_scores
from rag_lab.fusion.rrf import rrf_fuse
from rag_lab.ingest.tables import parse_row
from rag_lab.tokenizer import DomainTokenizer

# Six units (~1,300 characters): on the dev split ten covered more key facts (0.45 against 0.40) but the
# answers' recall was the same and an answer took a quarter longer (benchmarks/evidence_coverage.py,
# benchmarks/evidence_answers.py, docs/answering.md).
DEFAULT_EVIDENCE_UNITS = 6
EVIDENCE_RRF_K = 10
# Lines a sentence window reaches back (to the sentence's start) and ahead (to its end): a PDF line
# holds ~12 words, a sentence of the corpus one to three lines.
WINDOW_BACK = 1
WINDOW_AHEAD = 2
MAX_UNIT_CHARS = 600
_SENTENCE_END = re.compile(r"[.!?:;)\]\"”]\s*$")
_DIGIT_TOKEN = re.compile(r"\S*\d\S*")


@dataclass(frozen=True)
class Evidence:
    """One selected unit: ``text`` from lines ``first``..``last`` (1-based) of chunk ``doc`` ([Doc N])."""

    doc: int
    first: int
    last: int
    text: str
    score: float

    @property
    def lines_label(self) -> str:
        return f"line {self.first}" if self.first == self.last else f"lines {self.first}-{self.last}"

    def citation(self) -> str:
        return f"[Doc {self.doc}, {self.lines_label}]"

    def to_dict(self) -> dict:
        return {"doc": self.doc, "first_line": self.first, "last_line": self.last, "text": self.text,
                "score": round(self.score, 6)}


@dataclass(frozen=True)
class Unit:
    doc: int
    first: int  # 0-based line indices within the chunk
    last: int
    text: str


def chunk_lines(node: NodeWithScore) -> list[str]:
    text = node.node.get_content(metadata_mode=MetadataMode.NONE)
    return [line.strip() for line in text.splitlines() if line.strip()]


def _mostly_figures(line: str) -> bool:
    tokens = line.split()
    return len(tokens) >= 2 and len(_DIGIT_TOKEN.findall(line)) * 2 >= len(tokens)


def line_units(lines: Sequence[str], doc: int) -> list[Unit]:
    """One unit per line of a chunk: a table row (with its header when the parser left it bare) or a
    sentence window (the line and the lines its sentence was broken over)."""
    units: list[Unit] = []
    for j, line in enumerate(lines):
        if parse_row(line) is not None:
            units.append(Unit(doc, j, j, line))
            continue
        if _mostly_figures(line):
            header = next((k for k in range(j - 1, max(-1, j - 8), -1) if not _mostly_figures(lines[k])), None)
            text = f"{lines[header]} | {line}" if header is not None else line
            units.append(Unit(doc, j, j, text))
            continue
        first = j
        while first > 0 and j - first < WINDOW_BACK and not _SENTENCE_END.search(lines[first - 1]) \
                and parse_row(lines[first - 1]) is None and not _mostly_figures(lines[first - 1]):
            first -= 1
        last = j
        while last + 1 < len(lines) and last - j < WINDOW_AHEAD and not _SENTENCE_END.search(lines[last]) \
                and parse_row(lines[last + 1]) is None and not _mostly_figures(lines[last + 1]):
            last += 1
        units.append(Unit(doc, first, last, " ".join(lines[first:last + 1])[:MAX_UNIT_CHARS]))
    return units


def dense_scores(query: str, texts: Sequence[str], embed_model) -> np.ndarray:
    """Cosine of the question and every text under ``embed_model`` (texts embedded in one batch)."""
    if not texts:
        return np.zeros(0)
    query_vector = np.asarray(embed_model.get_query_embedding(query), dtype=float)
    vectors = np.asarray(embed_model.get_text_embedding_batch(list(texts)), dtype=float)
    norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(query_vector) or 1.0)
    return vectors @ query_vector / np.where(norms > 0, norms, 1.0)


def scorer_rankings(query: str, units: Sequence[Unit], embed_model=None,
                    tokenizer: DomainTokenizer | None = None) -> dict[str, list[int]]:
    """Each scorer's ranking of the units, best first: ``bm25``, and ``dense`` with a model."""
    texts = [unit.text for unit in units]
    sparse = line_scores(query, texts, tokenizer)
    legs = {"bm25": [int(i) for i in np.argsort(-sparse, kind="stable")]}
    if embed_model is not None:
        dense = dense_scores(query, texts, embed_model)
        legs["dense"] = [int(i) for i in np.argsort(-dense, kind="stable")]
    return legs


def pick_units(units: Sequence[Unit], order: Sequence[int], max_units: int, distinct_texts: bool = True) -> list[int]:
    """The first ``max_units`` of ``order`` (indices into ``units``) that repeat no line already taken
    and (``distinct_texts``) no text already taken: two PDFs, or two pages of one, often print the same
    sentence or row."""
    taken: set[tuple[int, int]] = set()
    texts: set[str] = set()
    picked: list[int] = []
    for index in order:
        unit = units[index]
        span = {(unit.doc, j) for j in range(unit.first, unit.last + 1)}
        if span & taken or (distinct_texts and unit.text in texts):
            continue
        taken |= span
        texts.add(unit.text)
        picked.append(index)
        if len(picked) == max_units:
            break
    return picked


def select_evidence(nodes: Sequence[NodeWithScore], query: str, max_units: int = DEFAULT_EVIDENCE_UNITS,
                    embed_model=None, tokenizer: DomainTokenizer | None = None,
                    rrf_k: float = EVIDENCE_RRF_K) -> list[Evidence]:
    """The best ``max_units`` units of ``nodes`` for ``query``, best first (BM25 ⊕ dense by RRF; BM25
    alone without a model), none repeating a line or a text."""
    units = [unit for doc, node in enumerate(nodes, start=1) for unit in line_units(chunk_lines(node), doc)]
    legs = scorer_rankings(query, units, embed_model, tokenizer)
    scores = {int(i): score for i, score in rrf_fuse(legs, k=rrf_k)}
    return [Evidence(units[i].doc, units[i].first + 1, units[i].last + 1, units[i].text, scores[i])
            for i in pick_units(units, list(scores), max_units)]
