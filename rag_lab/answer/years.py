"""Two program years in the context, none in the question: the answer names each year's figure.

Several documents are versions of one another (BCY 2025 and BCY 2026 board rates, the ACF-218 report
for FFY 2022/2023/2024). A question that names no year ("What is the maximum bi-weekly income for a
family of 5?") can retrieve both versions, and a small model then picks one figure without saying
which year it belongs to — right for one year, wrong for the other, and the reader cannot tell.
When the chunks given to the model come from two versions of one document for different program
years of one kind (years read from the file names, :func:`rag_lab.retrieve.year_match.document_versions`;
"versions" = the names' other words overlap, :data:`SAME_SERIES`) and the question names no program year, :func:`program_years_note` returns a line appended to the question
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

# Part of cached answers' keys (rag_lab.evaluate.plan.answering.prompt_version): change it with the rule.
YEARS_NOTE_TMPL = ("Note: the documents are for more than one {kind} ({years}) and the question names none: "
                   "answer for each of them, naming the year with each figure.")
_PROGRAM_YEAR = re.compile(rf"^({'|'.join(PROGRAM_YEAR_PREFIXES)})(\d+)$")
_VERSION_WORD = re.compile(rf"^(?:{'|'.join(PROGRAM_YEAR_PREFIXES)})?\d+$|^(?:{'|'.join(PROGRAM_YEAR_PREFIXES)})$")
# Two file names belong to one series (versions of one document) when their non-version words overlap this much:
# bcy25-/bcy26-board-max-provider-payment-rates… 0.67, bcy-26-/bcy2025-psoc-chart 1.0; a state plan
# and a survey report that happen to carry different fiscal years share almost nothing.
SAME_SERIES = 0.5
# Part of cached answers' keys with YEARS_NOTE_TMPL: which questions get the note.
YEARS_RULE = f"versions of one series (name words Jaccard >= {SAME_SERIES}), question names no program year; r1"


def _program_years(codes) -> set[tuple[str, int]]:
    found = set()
    for code in codes:
        match = _PROGRAM_YEAR.match(code)
        if match:
            found.add((match.group(1), int(match.group(2))))
    return found


def _spelled(prefix: str, year: int) -> str:
    return f"{prefix.upper()} {2000 + year if year < 100 else year}"


def _stem_words(filename: str) -> frozenset[str]:
    """A file name's words without its version tokens (``bcy25``, ``2025``, ``bcy``, ``26``)."""
    words = re.split(r"[^a-z0-9]+", re.sub(r"\.[A-Za-z0-9]+$", "", filename.lower()))
    return frozenset(w for w in words if w and not _VERSION_WORD.match(w))


def _versions_of_one_another(a: str, b: str) -> bool:
    """Two file names of one series (``bcy25-board-max-…-4-age-groups`` / ``bcy26-board-max-…``): their
    words without the version tokens overlap by at least SAME_SERIES (Jaccard)."""
    x, y = _stem_words(a), _stem_words(b)
    return bool(x and y) and len(x & y) / len(x | y) >= SAME_SERIES


def program_years_note(question: str, nodes: Sequence[NodeWithScore]) -> str | None:
    """The note for the prompt (module doc), or None when the question names a program year or no two
    of the chunks' documents are versions of one series for different years of one kind (BCY, FFY, …)."""
    if _program_years(versions_in_text(question)):
        return None
    chunks = []  # ([Doc N], filename, {(prefix, year)})
    for number, result in enumerate(nodes, start=1):
        filename = str(result.node.metadata.get("filename", ""))
        chunks.append((number, filename, _program_years(document_versions(filename))))
    for prefix in PROGRAM_YEAR_PREFIXES:
        docs: dict[tuple[str, int], list[int]] = {}
        for i, (number, filename, years) in enumerate(chunks):
            mine = {y for p, y in years if p == prefix}
            paired = any(mine and other_years != mine and _versions_of_one_another(filename, other)
                         for _, other, theirs in chunks[:i] + chunks[i + 1:]
                         if (other_years := {y for p, y in theirs if p == prefix}))
            if paired:
                for year in mine:
                    docs.setdefault((prefix, year), []).append(number)
        if len({y for _, y in docs}) < 2:
            continue
        listed = ", ".join(f"{_spelled(prefix, y)}: " + ", ".join(f"Doc {n}" for n in docs[(prefix, y)])
                           for _, y in sorted(docs))
        kind = "program year" if prefix in ("bcy", "py") else "fiscal year"
        return YEARS_NOTE_TMPL.format(kind=kind, years=listed)
    return None
