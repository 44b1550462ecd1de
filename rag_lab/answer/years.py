"""Two program years in the context, none in the question: the answer names each year's figure.

Several documents are versions of one another (BCY 2025 and BCY 2026 board rates, the ACF-218 report
for FFY 2022/2023/2024). A question that names no year ("What is the maximum bi-weekly income for a
family of 5?") can retrieve both versions, and a small model then picks one figure without saying
which year it belongs to — right for one year, wrong for the other, and the reader cannot tell.
When the chunks given to the model come from documents of two or more program years of one kind
(read from their file names, :func:`rag_lab.retrieve.year_match.document_versions`) and the
question names no program year, :func:`program_years_note` returns a line appended to the question
in the prompt: it lists the years with their ``[Doc N]`` numbers and asks for each year's answer,
named. A question that names a year (``BCY 2026``) is left alone: the year-boosted retrieval and the
model's reading already pick that version.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from llama_index.core.schema import NodeWithScore

from rag_lab.retrieve.year_match import document_versions, versions_in_text
from rag_lab.tokenizer import PROGRAM_YEAR_PREFIXES

# Part of cached answers' keys (rag_lab.evaluate.answering.prompt_version): change it with the rule.
YEARS_NOTE_TMPL = ("Note: the documents are for more than one {kind} ({years}) and the question names none: "
                   "answer for each of them, naming the year with each figure.")
_PROGRAM_YEAR = re.compile(rf"^({'|'.join(PROGRAM_YEAR_PREFIXES)})(\d+)$")


def _program_years(codes) -> set[tuple[str, int]]:
    found = set()
    for code in codes:
        match = _PROGRAM_YEAR.match(code)
        if match:
            found.add((match.group(1), int(match.group(2))))
    return found


def _spelled(prefix: str, year: int) -> str:
    return f"{prefix.upper()} {2000 + year if year < 100 else year}"


def program_years_note(question: str, nodes: Sequence[NodeWithScore]) -> str | None:
    """The note for the prompt (module doc), or None when the question names a program year or the
    chunks' documents do not span two years of one kind (BCY, FFY, SFY, FY, PY)."""
    if _program_years(versions_in_text(question)):
        return None
    docs: dict[tuple[str, int], list[int]] = {}  # (prefix, year) → the [Doc N] numbers of its chunks
    per_chunk: list[set[tuple[str, int]]] = []
    for number, result in enumerate(nodes, start=1):
        years = _program_years(document_versions(str(result.node.metadata.get("filename", ""))))
        per_chunk.append(years)
        for key in years:
            docs.setdefault(key, []).append(number)
    for prefix in PROGRAM_YEAR_PREFIXES:
        # two documents that differ in this kind's years (one file spanning FFY 2025-2027 alone is one version)
        sets = {frozenset(y for p, y in years if p == prefix) for years in per_chunk} - {frozenset()}
        if len(sets) < 2:
            continue
        years = sorted(y for p, y in docs if p == prefix)
        listed = ", ".join(f"{_spelled(prefix, y)}: " + ", ".join(f"Doc {n}" for n in docs[(prefix, y)]) for y in years)
        kind = "program year" if prefix in ("bcy", "py") else "fiscal year"
        return YEARS_NOTE_TMPL.format(kind=kind, years=listed)
    return None
