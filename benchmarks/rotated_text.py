"""Which bundled PDFs have rotated or vertical text, and how it reads after the ingest pre-pass.

    python benchmarks/rotated_text.py [FOLDER ...]   (default: both texas_childcare datasets)

For every page with non-upright characters: their count per reading direction (``btt`` turned
counter-clockwise, ``ttb`` clockwise, ``rtl`` upside down) and each bottom-to-top run as pdfplumber
reads it by default (reversed) and as the parsed page text now has it. Pages are preselected by
pdfium's character angles (fast); only those are read with pdfplumber. ``ok`` says the forward
form is in the parsed text (:func:`rag_lab.ingest.tables.page_text`) and the reversed one is not.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from pathlib import Path

import pdfplumber

from rag_lab.ingest.rotated import bottom_to_top_runs, direction
from rag_lab.ingest.tables import page_text

ROOT = Path(__file__).resolve().parents[1] / "datasets"
DEFAULT = [ROOT / "texas_childcare" / "pdfs", ROOT / "texas_childcare_full" / "pdfs"]
logging.getLogger("pdfminer").setLevel(logging.ERROR)


def _squash(text: str) -> str:
    return "".join(text.split())


def pages_with_turned_glyphs(path: Path) -> list[int]:
    """1-based pages where pdfium reports a character at a non-zero angle (fast: C, no layout)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_raw

    pdf = pdfium.PdfDocument(str(path))
    found = []
    for index in range(len(pdf)):
        textpage = pdf[index].get_textpage()
        angles = (pdfium_raw.FPDFText_GetCharAngle(textpage.raw, k) for k in range(textpage.count_chars()))
        if any(0.01 < angle < 6.27 for angle in angles):
            found.append(index + 1)
    pdf.close()
    return found


def survey(path: Path) -> list[str]:
    lines = []
    candidates = pages_with_turned_glyphs(path)
    if not candidates:
        return lines
    with pdfplumber.open(path) as pdf:
        for number in candidates:
            page = pdf.pages[number - 1]
            rotated = [c for c in page.chars if not c.get("upright", True)]
            if not rotated:
                continue
            counts = Counter(direction(c) for c in rotated)
            runs = ["".join(c["text"] for c in run).strip() for run in bottom_to_top_runs(page.chars)]
            runs = [r for r in runs if len(_squash(r)) > 1]
            parsed = _squash(page_text(page))
            # a run reads right when its forward form is in the parsed text and no reversed one is
            # (palindromes and one-letter runs say nothing either way)
            wrong = [r for r in runs if _squash(r) not in parsed
                     or (_squash(r)[::-1] != _squash(r) and _squash(r)[::-1] in parsed)]
            shown = ", ".join(sorted(set(runs))[:12])
            lines.append(f"{path.name} p{number}: {dict(counts)} runs={len(runs)} "
                         f"{'ok' if not wrong else 'WRONG ' + repr(wrong[:5])} [{shown}]")
    return lines


def main(folders: list[Path]) -> int:
    bad = 0
    for folder in folders:
        for path in sorted(folder.glob("*.pdf")):
            for line in survey(path):
                bad += "WRONG" in line
                print(line, flush=True)
    print(f"pages with a run that does not read forwards: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main([Path(a) for a in sys.argv[1:]] or DEFAULT))
