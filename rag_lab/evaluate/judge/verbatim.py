"""A statement a context contains word for word is stated: no model call.

The evidence-first answers quote their evidence lines (``“…” [Doc 2: file, Page 3, line 8]``); the
1.5B model's P(yes) for a line copied from its own premise is 0.57–0.67, barely above a wrong
statement's, and each such verdict costs a forward pass. Code sees a copy exactly: the statement,
without quotation marks and citation markers, whitespace and case folded, is a substring of one
context folded the same way (a PDF line break is a space). Short fragments are left to the model
("not eligible" copied out of "not eligible unless …" can drop the condition that makes it true),
except the pieces of a quotation ("Contact support”" where the answer quoted a line that the
splitter cut): the quotation marks say the answer copies, and a copied line cut short claims
nothing of its own.
"""

from __future__ import annotations

import re

# Statements shorter than this many words are not decided by a copy.
MIN_WORDS = 6
_CITATION = re.compile(r"\[Doc\s*\d+[^\]]*\]", re.IGNORECASE)
_QUOTES = re.compile(r"[\"“”‘’«»]")
_SPACE = re.compile(r"\s+")
_OPENS = re.compile(r"^[\"“‘]")
_CLOSES = re.compile(r"[\"”’]$")


def fold(text: str) -> str:
    """``text`` without citation markers and quotation marks, whitespace collapsed, lower case."""
    return _SPACE.sub(" ", _QUOTES.sub("", _CITATION.sub(" ", text))).strip().lower()


def copied_from(statement: str, context: str) -> bool:
    """Whether ``statement`` (its end punctuation aside) is a word-for-word copy of part of ``context``."""
    folded = fold(statement).rstrip(" .;:,")
    text = _CITATION.sub(" ", statement).strip().rstrip(" .;:,")
    # opened and not closed here, or closed and not opened: a piece of a longer quotation
    piece = bool(_OPENS.search(text)) != bool(_CLOSES.search(text))
    return len(folded.split()) >= (1 if piece else MIN_WORDS) and folded in fold(context)
