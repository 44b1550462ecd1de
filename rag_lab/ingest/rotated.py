"""Rotated text read forwards: a character-level pre-pass before any text or table extraction.

A table header set sideways (text matrix ``(0, s, -s, 0)``: the glyphs turned 90° counter-clockwise,
read bottom to top) comes out of pdfplumber reversed, ``Infant FT`` as ``TF tnafnI``, because rotated
characters are read top to bottom. ``char_dir_rotated="btt"`` fixes plain text but would have to be
threaded through every extraction (table cells, crops) and breaks text rotated the other way.

Instead each run of bottom-to-top characters (one vertical line of one cell: same column, no gap
wider than :data:`RUN_GAP` font sizes) is mirrored inside its own vertical extent, so that the
default top-to-bottom reading meets its characters in writing order. A run keeps its bounding box,
so it stays in the same table cell and the table finder sees the same page. A table cell whose
characters are mostly sideways is then read as vertical lines, left to right
(:func:`rag_lab.ingest.tables.table_cells`): the page-wide reading clusters lines by height, which
would interleave the words of a two-line sideways header.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

# Each mirrored character keeps its run's midpoint (x, y): a sideways header that overflows its cell
# by a character or two still belongs to the cell that holds most of it (tables.table_cells).
RUN_MIDPOINT = "run_midpoint"
RUN_GAP = 1.5  # font sizes: a larger vertical gap ends a run (the next cell down, another label)
_COLUMN_TOLERANCE = 1.0  # points: characters of one vertical line share their x0 up to this


def direction(char: dict) -> str:
    """``ltr`` (upright), ``btt`` (turned counter-clockwise), ``ttb`` (clockwise) or ``rtl`` (upside down)."""
    a, b, c, d = (float(v) for v in char["matrix"][:4])
    if abs(b) > abs(a) and abs(c) > abs(d):
        return "btt" if b > 0 else "ttb"
    return "rtl" if a < 0 else "ltr"


def font_size(char: dict) -> float:
    """The glyph's scale from its text matrix (pdfplumber's ``size`` of a rotated char is its width)."""
    a, b = (float(v) for v in char["matrix"][:2])
    return math.hypot(a, b) or 10.0


def is_vertical(chars: list[dict]) -> bool:
    """Most of these (non-blank) characters are set bottom to top: read them as vertical lines.
    (Top-to-bottom text is left to pdfplumber, whose default reading already suits it.)"""
    inked = [c for c in chars if c["text"].strip()]
    return bool(inked) and 2 * sum(map(_bottom_to_top, inked)) > len(inked)


def _bottom_to_top(char: dict) -> bool:
    return not char.get("upright", True) and direction(char) == "btt"


def _columns(chars: list[dict]) -> dict[float, list[dict]]:
    """``chars`` by vertical line: the same ``x0`` up to :data:`_COLUMN_TOLERANCE`."""
    columns: dict[float, list[dict]] = defaultdict(list)
    for char in chars:
        columns[round(float(char["x0"]) / _COLUMN_TOLERANCE) * _COLUMN_TOLERANCE].append(char)
    return columns


def vertical_text(chars: list[dict]) -> str:
    """Sideways characters (already in writing order top to bottom) as text: vertical lines left to
    right, one per output line; a gap of a third of the font size without a blank is a space."""
    lines = []
    for _, column in sorted(_columns(chars).items()):
        column.sort(key=lambda ch: float(ch["top"]))
        text = column[0]["text"]
        for before, char in zip(column, column[1:]):
            gap = float(char["top"]) - float(before["bottom"])
            text += (" " if gap > font_size(char) / 3 and not (text.endswith(" ") or char["text"] == " ") else "") + char["text"]
        lines.append(" ".join(text.split()))
    return "\n".join(line for line in lines if line)


def bottom_to_top_runs(chars: list[dict]) -> list[list[dict]]:
    """The bottom-to-top characters grouped into vertical runs, each in writing order (bottom first)."""
    runs: list[list[dict]] = []
    for column in _columns([c for c in chars if _bottom_to_top(c)]).values():
        column.sort(key=lambda ch: -float(ch["bottom"]))
        run = [column[0]]
        for char in column[1:]:
            gap = float(run[-1]["top"]) - float(char["bottom"])
            if gap > RUN_GAP * font_size(char):
                runs.append(run)
                run = []
            run.append(char)
        runs.append(run)
    return runs


def _mirrored(chars: list[dict]) -> dict[int, dict]:
    """id(char) → a copy mirrored inside its run's vertical extent."""
    out: dict[int, dict] = {}
    for run in bottom_to_top_runs(chars):
        low, high = min(float(c["top"]) for c in run), max(float(c["bottom"]) for c in run)
        run_mid = ((min(float(c["x0"]) for c in run) + max(float(c["x1"]) for c in run)) / 2, (low + high) / 2)
        for char in run:
            top, bottom = low + high - float(char["bottom"]), low + high - float(char["top"])
            moved_top, moved_bottom = top - float(char["top"]), bottom - float(char["bottom"])
            out[id(char)] = {**char, "top": top, "bottom": bottom, "doctop": float(char["doctop"]) + moved_top,
                             "y1": float(char["y1"]) - moved_top, "y0": float(char["y0"]) - moved_bottom,
                             RUN_MIDPOINT: run_mid}
    return out


def read_rotated_forwards(page: Any) -> Any:
    """The page (a pdfplumber Page) with its bottom-to-top runs mirrored; the page itself when it has none."""
    chars = page.chars
    mirrored = _mirrored(chars)
    if not mirrored:
        return page
    derived = page.filter(lambda _: True)
    derived._objects = {kind: list(objs) for kind, objs in page.objects.items()}
    derived._objects["char"] = [mirrored.get(id(c), c) for c in chars]
    return derived
