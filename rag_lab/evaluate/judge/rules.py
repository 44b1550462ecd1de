"""Two more verdicts by code beside the numeric rule (issue 35): negation and names.

The 1.5B judge's P(Yes) barely moves when "is" becomes "is not" or one board's name becomes
another's (dev questions 1–11: pairwise 0.55 and 0.56 for those kinds with the model alone). Both
are things code can see:

- ``negation_mismatch``: the statement negates ("not", "no", "never", "cannot", "n't") and none of
  its evidence passages does → unsupported (the premise states the affirmative, or nothing);
- ``unstated_names``: a proper name or acronym of the statement has a word (3+ letters) that no
  context contains → unsupported ("Gulf Coast Board" where the contexts only name Harris County).

Chosen on the dev questions by code alone (no model): negation fired on 0 of 11 supported answers
and 10 of 11 negated ones; names on 2 of 11 supported and 8 of 9 swapped ones.
"""

from __future__ import annotations

import re

from rag_lab.evaluate.judge.validation_kinds import acronyms_in, names_in

_NEGATION = re.compile(r"\b(?:not|no|never|cannot|none|nor|neither)\b|n't\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]+")
_GLUE = frozenset({"and", "the", "for", "of"})


def negation_mismatch(statement: str, evidence: str) -> bool:
    """Whether ``statement`` negates and ``evidence`` has no negation at all."""
    return bool(_NEGATION.search(statement)) and not _NEGATION.search(evidence)


def unstated_names(statement: str, context: str) -> list[str]:
    """The statement's names and acronyms with a word (3+ letters) that ``context`` never contains."""
    words = {w.lower() for w in _WORD.findall(context)}
    missing = []
    for name in names_in(statement) + acronyms_in(statement):
        if any(w.lower() not in words for w in _WORD.findall(name) if len(w) >= 3 and w.lower() not in _GLUE):
            missing.append(name)
    return missing
