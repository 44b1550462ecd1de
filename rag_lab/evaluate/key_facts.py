"""Key facts: the numbers, money amounts, percentages and codes a text states.

They are the sparse tokenizer's domain terms (``rag_lab.tokenizer``), so ``$4,106``,
``$4106`` and ``4,106 dollars`` are one fact, as are ``BCY-26`` and ``BCY 2026``. Key-fact
recall is the share of a reference answer's facts that an answer states: the kernel of the
RAGAS metric of the same name and of the offline citation check.
"""

from __future__ import annotations

from rag_lab.tokenizer import Term, amount_of, iter_terms


def extract_key_facts(text: str) -> set[str]:
    """The normalised domain terms of ``text`` (``{"dollar_4106", "percent_85", "bcy26", "5"}``)."""
    return {term.text for term in iter_terms(text or "") if term.is_domain}


def _stated_values(text: str) -> set[str]:
    """What ``text`` states, with each money amount also as its bare number."""
    values: set[str] = set()
    for term in iter_terms(text or ""):
        if term.is_domain:
            values.add(term.text)
            if (amount := amount_of(term)) is not None:
                values.add(amount)
    return values


def _is_stated(fact: Term, stated: set[str]) -> bool:
    # Money and plain numbers are interchangeable ("$4,106" is stated by a table row "4,106" and
    # "4,106" by "$4,106"); percentages and codes only by themselves.
    if fact.text in stated:
        return True
    if fact.kind == "money":
        return amount_of(fact) in stated
    if fact.kind == "number":
        return any(value.endswith(f"_{fact.text}") for value in stated if value.startswith(("dollar_", "euro_", "pound_")))
    return False


def key_fact_recall(answer: str, reference: str) -> float | None:
    """Share of ``reference``'s key facts that ``answer`` states; None when it has none."""
    facts = {term.text: term for term in iter_terms(reference or "") if term.is_domain}
    if not facts:
        return None
    stated = _stated_values(answer)
    return sum(_is_stated(fact, stated) for fact in facts.values()) / len(facts)


def missing_key_facts(answer: str, reference: str) -> list[str]:
    """The reference's key facts that ``answer`` does not state (for failure analysis)."""
    stated = _stated_values(answer)
    facts = {term.text: term for term in iter_terms(reference or "") if term.is_domain}
    return sorted(text for text, fact in facts.items() if not _is_stated(fact, stated))
