"""An answer as a report shows it: citations once, and whole or cut at a word with "…".

Generated answers carry ``[Doc N: file, Page X]`` stamps inline and often a closing run of them
("… [Doc 1] [Doc 2] [Doc 3] [Doc 4] [Doc 5]"). A report lists the cited sources on their own line,
so inline stamps are shortened to ``[Doc N]``, the closing run is dropped, and each source is named
once in :func:`cited_line`.
"""

from __future__ import annotations

import re
import textwrap

ANSWER_CHARS = 1200  # beyond this a report shows the start of an answer, cut at a word

STAMP = re.compile(r"\[Doc\s+(\d+)(?::\s*([^\]]*))?\]")
# the closing run: stamps after the last sentence (optionally after "Sources:"), separated by spaces,
# commas or semicolons; a stamp before a sentence's full stop is inline and stays
TRAILING_STAMPS = re.compile(r"(?:\s*(?:sources?\s*:)?\s*(?:\[Doc\s+\d+(?::[^\]]*)?\][\s,;]*)+\.?\s*)$", re.I)


def stamp_sources(answer: str) -> dict[str, str]:
    """``{"1": "file.pdf, Page 2", …}`` from the answer's own stamps, first seen first."""
    sources: dict[str, str] = {}
    for number, where in STAMP.findall(answer or ""):
        if where and number not in sources:
            sources[number] = where.strip()
    return sources


def readable_answer(answer: str, limit: int = ANSWER_CHARS) -> str:
    """The answer with its closing run of stamps dropped (when text precedes it), inline stamps
    shortened to ``[Doc N]`` and, when longer than ``limit`` characters, cut at a word with "…"."""
    text = str(answer or "").strip()
    body = TRAILING_STAMPS.sub("", text).rstrip()
    if body:
        text = body
    text = STAMP.sub(lambda m: f"[Doc {m.group(1)}]", text)
    if len(text) <= limit:
        return text
    cut = textwrap.shorten(text, width=limit, placeholder="…")
    return cut if cut != "…" else text[:limit - 1] + "…"  # one word longer than the limit: cut inside it


def cut_note(answer: str) -> str:
    """Why a stored answer stops where it does, when the cause is known: the answer format's length
    limit (the JSON schema's maxLength cuts a local model's answer mid-word); "" otherwise."""
    from rag_lab.answer.prompt import ANSWER_MAX_CHARS

    body = TRAILING_STAMPS.sub("", str(answer or "").strip()).rstrip()
    if len(body) >= ANSWER_MAX_CHARS and body[-1] not in ".!?)\"”":
        return f"as generated: stopped at the answer format's {ANSWER_MAX_CHARS}-character limit"
    return ""


def cited_line(answer: str, cited_sources) -> str:
    """Each cited source once: ``[Doc N] file, Page X`` (``[Doc 2, 3]`` for two chunks of one page) where the answer's stamps name it, else the
    record's cited sources (``file p.N``); "(none cited)" when there are none."""
    stamps = stamp_sources(answer)
    if stamps:
        numbers: dict[str, list[str]] = {}  # chunks of one file and page are one source
        for number, where in stamps.items():
            numbers.setdefault(where, []).append(number)
        return "; ".join(f"[Doc {', '.join(ns)}] {where}" for where, ns in numbers.items())
    names = []
    for source in cited_sources or []:
        if isinstance(source, dict):
            page = source.get("page")
            name = f"{source.get('doc')}" + (f" p.{page}" if page is not None else "")
        else:
            name = str(source)
        if name not in names:
            names.append(name)
    return ", ".join(names) or "(none cited)"
