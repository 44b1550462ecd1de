"""A report page's building block: one titled section (shared by every kind of report)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Section:
    """One titled part of a report page (``render_document`` in :mod:`rag_lab.report.html` lays them out)."""

    title: str
    body: str
    folded: str = ""  # when set: the body is folded in <details>, this the line that unfolds it

    @property
    def anchor(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.title.lower()).strip("-")

