"""A figure read from the wrong cell of a table row is not stated.

Tables reach the judge as rows, one per line: ``Income Eligibility Limits | Family Size 5 | Annual:
$106,768 | Monthly: $8,897 | … | Bi-Monthly: $4,449 | Bi-Weekly: $4,106``. The local generators'
commonest wrong answer takes a figure the contexts do state from the wrong cell — another column
("bi-weekly … $4,449", the Bi-Monthly cell) or another row ("a family of 5 … $5,522", the row of
family size 10; a payment date of another service period). The numbers rule passes it (the figure
is in a context) and the 1.5B model's P(yes) for it is as high as for the right cell. Code sees a
cell's place:

- **row**: a figure of the statement is held only by rows of its table whose labels (the row's
  first cell and its cells without a header: "Family Size 5", "Payment Service Dates 1/27/2025 -
  2/09/2025") hold none of the statement's other label figures which tell that table's rows apart
  (a list of several rows' figures, each beside its own row label, passes; a bare list of one
  column's figures names no row; a year every row repeats tells nothing);
- **column**: the statement names another column of the figure's row (by its header, a pay period
  in any common wording: "every two weeks" is Bi-Weekly) and never the figure's own column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_lab.evaluate.judge.numeric import strip_citations, values_of

# A line is a table row when it has at least this many " | " separated cells.
MIN_CELLS = 3
# Column headers shorter than this (letters and digits) are too vague to be named by chance-free text.
MIN_HEADER_CHARS = 4
_PERIODS: tuple[tuple[str, str], ...] = (
    # wordings of one pay period → its name; the longer wordings first (bi-weekly before weekly)
    (r"bi-?weekly|every (?:two|2|other) weeks?|fortnightly", "biweekly"),
    (r"bi-?monthly|semi-?monthly|twice (?:a|per|each) month", "bimonthly"),
    (r"monthly|(?:per|a|each|every) month", "monthly"),
    (r"weekly|(?:per|a|each|every) week", "weekly"),
    (r"annual(?:ly)?|yearly|(?:per|a|each|every) year", "annual"),
    (r"hourly|(?:per|an|each|every) hour", "hourly"),
    (r"daily|(?:per|a|each|every) day", "daily"),
)
_PERIOD_PATTERNS = tuple((re.compile(rf"\b(?:{words})\b", re.IGNORECASE), name) for words, name in _PERIODS)
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Cell:
    header: str  # the text before the cell's last ": " ("" for a cell without one, e.g. a row label)
    values: frozenset[str]


@dataclass(frozen=True)
class Row:
    table: str  # the row's first cell: rows of one table repeat it
    cells: tuple[Cell, ...]

    @property
    def values(self) -> frozenset[str]:
        return frozenset().union(*(cell.values for cell in self.cells))

    @property
    def labels(self) -> frozenset[str]:
        """The figures that name the row: its first cell's and those of its cells without a header."""
        return frozenset().union(*(cell.values for i, cell in enumerate(self.cells) if i == 0 or not cell.header))


def rows_of(context: str) -> list[Row]:
    """The table rows of ``context`` (lines of ``MIN_CELLS`` or more " | " separated cells)."""
    rows = []
    for line in context.splitlines():
        parts = [part.strip() for part in line.split(" | ")]
        if len(parts) < MIN_CELLS:
            continue
        cells = []
        for part in parts[1:]:
            header, _, value = part.rpartition(": ")
            cells.append(Cell(header=header, values=frozenset(_loose_values(value if header else part))))
        rows.append(Row(table=parts[0].lower(), cells=tuple(cells)))
    return rows


def _loose_values(text: str) -> set[str]:
    """``text``'s values without their kind ("money:4106" and a bare "4106" are one figure)."""
    return {value.split(":", 1)[1] for value in values_of(text, named_intervals=False)}


def periods_in(text: str) -> set[str]:
    """The pay periods ``text`` names ("every two weeks" → "biweekly"), each wording read once."""
    found = set()
    for pattern, name in _PERIOD_PATTERNS:
        if pattern.search(text):
            found.add(name)
            text = pattern.sub(" ", text)
    return found


def _names_header(header: str, statement_periods: set[str], folded_statement: str) -> bool:
    periods = periods_in(header)
    if periods:
        return bool(periods & statement_periods)
    folded = _NON_ALNUM.sub(" ", header.lower()).strip()
    return len(folded.replace(" ", "")) >= MIN_HEADER_CHARS and f" {folded} " in folded_statement


def misplaced_figures(statement: str, context: str) -> list[str]:
    """The statement's figures that ``context``'s tables hold only in cells the statement's own
    words place elsewhere (another row, another column), sorted; [] when no figure is misplaced or
    the context has no table."""
    rows = rows_of(context)
    if not rows:
        return []
    text = strip_citations(statement)
    figures = _loose_values(text)
    statement_periods = periods_in(text)
    folded_statement = f" {_NON_ALNUM.sub(' ', text.lower()).strip()} "
    misplaced = set()
    for figure in figures:
        holding = [row for row in rows if figure in row.values]
        if not holding:
            continue
        table_rows = [row for row in rows if row.table in {r.table for r in holding}]
        # the statement's other figures that name rows of this table apart (a year every row repeats does not;
        # another column's figure names no row)
        others = {f for f in figures - {figure}
                  if 0 < sum(f in row.labels for row in table_rows) < len(table_rows)}
        # a figure that names a row itself (its label) is placed by that row, whatever else the statement lists
        named_row = any(figure in row.labels for row in holding)
        if others and not named_row and not any(others & row.labels for row in holding):
            misplaced.add(figure)
            continue
        # the column: the figure's own header unnamed while the statement names another header of its row
        for row in holding:
            own = [cell for cell in row.cells if figure in cell.values and cell.header]
            if not own:
                break  # a cell without a header (a row label) places nothing
            if any(_names_header(cell.header, statement_periods, folded_statement) for cell in own):
                break
            other_headers = [cell.header for cell in row.cells if cell.header and figure not in cell.values]
            if not any(_names_header(h, statement_periods, folded_statement) for h in other_headers):
                break
        else:
            misplaced.add(figure)
    return sorted(misplaced)
