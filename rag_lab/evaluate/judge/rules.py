"""Two more verdicts by code beside the numeric rule: negation and names.

The 1.5B judge's P(Yes) barely moves when "is" becomes "is not" or one board's name becomes
another's (dev questions 1–11: pairwise 0.55 and 0.56 for those kinds with the model alone). Both
are things code can see:

- ``negation_mismatch``: the statement negates ("not", "no", "never", "cannot", "n't") and none of
  its evidence passages does → unsupported (the premise states the affirmative, or nothing);
- ``unstated_names``: a proper name or acronym of the statement has a word (3+ letters) that no
  context contains → unsupported ("Gulf Coast Board" where the contexts only name Harris County).
  A name whose initials are an acronym the context states ("Child Care and Development Fund" where
  the context says "CCDF", "State Median Income" for "SMI") is the context's name spelled out: stated.

Chosen on the dev questions by code alone (no model): negation fired on 0 of 11 supported answers
and 10 of 11 negated ones; names (without the spelled-out acronyms) on 2 of 11 supported and 8 of 9
swapped ones — both supported ones were spelled-out acronyms of their contexts.
With the spelled-out acronyms: names on 0 of 11 supported and 8 of 9 swapped ones; faithfulness on
dev 0.93 pairwise / AUC 0.91 (swapped_entity 0.89 / 0.90) against 0.90 / 0.85 without the rule, so
both rules are on by default (``RAG_LAB_JUDGE_NEGATION``, ``RAG_LAB_JUDGE_NAMES``).
"""

from __future__ import annotations

import re

_CAP = r"[A-Z][a-zA-Z'’]+(?:-[A-Za-z]+)*"
_NAME = re.compile(rf"\b{_CAP}(?:\s+(?:of|and|for|the)\s+{_CAP}|\s+{_CAP})+")
_ACRONYM = re.compile(r"\b[A-Z]{2,6}s?\b")
_NOT_A_NAME_START = frozenset({"The", "A", "An", "This", "That", "These", "Those", "It", "In", "If", "For", "To",
                               "Each", "All", "Any", "Some", "When", "Under", "Per", "Yes", "No", "Page", "Table",
                               "At", "From", "Between", "As", "On", "Effective", "Beginning", "Not", "Getting", "By"})
_MONTH_WORDS = frozenset({"January", "February", "March", "April", "May", "June", "July", "August", "September",
                          "October", "November", "December"})
# A name has 2–5 words, none repeated and no month (PDF table layouts run headers together)
MAX_NAME_WORDS = 5


def names_in(text: str) -> list[str]:
    """Multi-word proper names of ``text`` (a leading "The"/"This"… dropped), in order, unique."""
    found = []
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        while words and words[0] in _NOT_A_NAME_START:
            words = words[1:]
        if (2 <= len(words) <= MAX_NAME_WORDS and words[-1] not in ("of", "and", "for", "the")
                and len(set(words)) == len(words) and not _MONTH_WORDS & set(words)):
            found.append(" ".join(words))
    return list(dict.fromkeys(found))


def acronyms_in(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0) for m in _ACRONYM.finditer(text)))


_NEGATION = re.compile(r"\b(?:not|no|never|cannot|none|nor|neither)\b|n't\b", re.IGNORECASE)
# A "not" that widens instead of negating ("including, but not limited to", "not only … but also").
_WIDENING_NOT = re.compile(r"\bnot\s+(?:limited\s+to|only)\b", re.IGNORECASE)
# Words that say "no" without a negation: a negated statement may restate them ("do not pay" for
# "free of charge", "are not required" for "exempt"), so an evidence with one leaves the verdict
# to the model.
_PRIVATIVE = re.compile(r"\b(?:free|without|exempt\w*|waive[ds]?|except|unless|exclud\w+|ineligible|prohibit\w*|"
                        r"unable|lacks?|too|nobody|nothing)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]+")
_GLUE = frozenset({"and", "the", "for", "of"})
_ACRONYM_WORD = re.compile(r"\b[A-Z]{2,8}s?\b")
# Initials shorter than this match too much by chance ("Licensed Homes" = "LH", a rate table's column).
MIN_INITIALS = 3


def negation_mismatch(statement: str, evidence: str) -> bool:
    """Whether ``statement`` negates and ``evidence`` has no negation at all, and the line of
    ``evidence`` closest to the statement (its best passage) has no word that says "no" in other
    words (``_PRIVATIVE``: "free", "without", "exempt" …) which the statement does not repeat."""
    if not _NEGATION.search(_WIDENING_NOT.sub(" ", statement)) or _NEGATION.search(evidence):
        return False
    from rag_lab.evaluate.judge.evidence import best_passages

    # only the restated passage counts (a negated "children are not allowed 40 absences" beside
    # another passage's "prohibited" is still caught), and only a word the statement does not use
    # itself (it says "unable" and negates something else)
    lines = [line for line in evidence.splitlines() if line.strip()]
    said = {w.lower() for w in _PRIVATIVE.findall(statement)}
    return not any(w.lower() not in said for line in best_passages(statement, lines, k=1)
                   for w in _PRIVATIVE.findall(line))


def initials(name: str) -> str:
    """"Child Care and Development Fund" → "CCDF" (glue words left out)."""
    return "".join(w[0].upper() for w in _WORD.findall(name) if w.lower() not in _GLUE)


def unstated_names(statement: str, context: str) -> list[str]:
    """The statement's names and acronyms with a word (3+ letters) that ``context`` never contains,
    except a name spelled out from an acronym (``MIN_INITIALS``+ letters) the context states."""
    words = {w.lower() for w in _WORD.findall(context)}
    context_acronyms = {a.rstrip("s") for a in _ACRONYM_WORD.findall(context)}
    missing = []
    for name in names_in(statement) + acronyms_in(statement):
        if any(w.lower() not in words for w in _WORD.findall(name) if len(w) >= 3 and w.lower() not in _GLUE):
            spelled_out = initials(name)
            if " " in name and len(spelled_out) >= MIN_INITIALS and spelled_out in context_acronyms:
                continue
            missing.append(name)
    return missing
