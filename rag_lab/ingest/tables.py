"""PDF pages as text in which every table row describes itself.

``page.extract_text()`` flattens a table into rows of bare numbers under a header line
(``5 $106,768 $8,897 $2,053 $4,449 $4,106`` under ``Size Annual Monthly … Bi-Weekly``): a reader
(a small LLM, a line-level compressor, BM25 on a chunk that starts mid-table) must count columns
to know that $4,106 is the bi-weekly limit for a family of 5. Tables that pdfplumber detects are
written instead as one line per row that carries the table's caption (the text line just above
it) and each cell's column name::

    Income Eligibility Limits | Family Size 5 | Annual: $106,768 | Monthly: $8,897 | Weekly: $2,053 | Bi-Monthly: $4,449 | Bi-Weekly: $4,106

(``" | "`` separates the parts, a cell is ``column: value``: :func:`parse_row` reads it back, so that
the answer-time compression can keep only the columns a question names).

Text above, between and below the tables is extracted as before, in reading order. A detected
region that does not look like a table with a header (fewer than two rows or columns, an empty
header) stays plain text: nothing on the page is lost.
"""

from __future__ import annotations

import re
from typing import Any

from rag_lab.ingest.rotated import RUN_MIDPOINT, is_vertical, read_rotated_forwards, vertical_text

_SPACES = re.compile(r"\s+")
_CURRENCY_GAP = re.compile(r"([$€£])[ \t]+(?=\d)")


SEPARATOR = " | "
CELL = ": "


def clean_cell(cell: str | None) -> str:
    """One line, single spaces, ``$ 4,106`` → ``$4,106``, no ``|`` (the row separator)."""
    return _CURRENCY_GAP.sub(r"\1", _SPACES.sub(" ", (cell or "").replace("|", "/")).strip())


def is_header_table(rows: list[list[str]]) -> bool:
    """At least a header and one data row, two columns, and every header cell named."""
    return len(rows) >= 2 and len(rows[0]) >= 2 and all(rows[0])


def render_rows(rows: list[list[str | None]], caption: str = "") -> list[str]:
    """Each data row as ``caption | <first header> <label> | <header>: <value> | …`` (empty cells skipped)."""
    cleaned = [[clean_cell(cell) for cell in row] for row in rows]
    header, body = cleaned[0], cleaned[1:]
    lines = []
    for row in body:
        if not any(row):
            continue
        label = f"{header[0]} {row[0]}".strip() if row[0] else header[0]
        cells = [f"{name}{CELL}{value}" for name, value in zip(header[1:], row[1:]) if value]
        lines.append(SEPARATOR.join(([caption] if caption else []) + [label] + cells))
    return lines


def parse_row(line: str) -> tuple[list[str], list[tuple[str, str]]] | None:
    """A rendered row's (label parts, [(column, value), …]); None for any other line."""
    parts = line.split(SEPARATOR)
    if len(parts) < 3:
        return None
    labels, cells = [], []
    for part in parts:
        if CELL in part:
            name, value = part.split(CELL, 1)
            cells.append((name, value))
        elif cells:  # a label after the cells: not one of our rows
            return None
        else:
            labels.append(part)
    return (labels, cells) if labels and cells else None


def _text(page: Any) -> str:
    return _CURRENCY_GAP.sub(r"\1", page.extract_text() or "")


def page_text(page: Any) -> str:
    """The text of a pdfplumber page, its header tables written row by row (see module doc);
    rotated text (sideways table headers) reads forwards (:mod:`rag_lab.ingest.rotated`)."""
    page = read_rotated_forwards(page)
    x0, top, x1, bottom = page.bbox
    tables = []
    for table in sorted(page.find_tables(), key=lambda t: t.bbox[1]):
        rows = table_cells(table)
        if is_header_table([[clean_cell(c) for c in row] for row in rows]):
            tables.append((table.bbox, rows))
    if not tables:
        return _text(page)
    if any(RUN_MIDPOINT in c for c in page.chars):  # sideways text a table took is not text around it too
        page = page.filter(lambda obj: not _taken(obj, [bbox for bbox, _ in tables]))
    parts: list[str] = []
    cursor = top
    for bbox, rows in tables:
        t_top, t_bottom = max(bbox[1], top), min(bbox[3], bottom)
        if t_top < cursor:  # overlaps the previous table: its text stays in that band's text
            continue
        above = _lines(page.crop((x0, cursor, x1, t_top))) if t_top > cursor else []
        parts.extend(above)
        parts.extend(render_rows(rows, above[-1] if above else ""))
        # text beside the table, in the same band (a side note, a second column)
        band = page.crop((x0, t_top, x1, t_bottom))
        parts.extend(_lines(band.outside_bbox(_clamp(bbox, band.bbox))))
        cursor = t_bottom
    if cursor < bottom:
        parts.extend(_lines(page.crop((x0, cursor, x1, bottom))))
    return "\n".join(parts)


def _in_bbox(char: dict, bbox: tuple[float, float, float, float]) -> bool:
    """pdfplumber's rule: a character belongs to the box holding its midpoint (a sideways character:
    its run's midpoint, see :data:`rag_lab.ingest.rotated.RUN_MIDPOINT`)."""
    x_mid, y_mid = char.get(RUN_MIDPOINT) or ((char["x0"] + char["x1"]) / 2, (char["top"] + char["bottom"]) / 2)
    return bbox[0] <= x_mid < bbox[2] and bbox[1] <= y_mid < bbox[3]


def _taken(obj: dict, boxes: list[tuple[float, float, float, float]]) -> bool:
    return RUN_MIDPOINT in obj and any(_in_bbox(obj, box) for box in boxes)


def table_cells(table: Any) -> list[list[str | None]]:
    """``table.extract()``, except that a cell set sideways is read as vertical lines, left to right,
    each top to bottom (after :func:`read_rotated_forwards` that is writing order)."""
    from pdfplumber.utils import extract_text

    chars = table.page.chars
    rows: list[list[str | None]] = []
    for row in table.rows:
        row_chars = [c for c in chars if _in_bbox(c, row.bbox)]
        cells: list[str | None] = []
        for cell in row.cells:
            inside = [c for c in row_chars if _in_bbox(c, cell)] if cell is not None else None
            if inside is None:
                cells.append(None)
            elif not inside:
                cells.append("")
            elif is_vertical(inside):
                cells.append(vertical_text(inside))
            else:
                cells.append(extract_text(inside))
        rows.append(cells)
    return rows


def _lines(page: Any) -> list[str]:
    return [line.strip() for line in _text(page).splitlines() if line.strip()]


def _clamp(bbox: tuple[float, float, float, float], outer: tuple[float, float, float, float]) -> tuple[float, ...]:
    return (max(bbox[0], outer[0]), max(bbox[1], outer[1]), min(bbox[2], outer[2]), min(bbox[3], outer[3]))
