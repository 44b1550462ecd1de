"""The judge validation set: questions with their reference chunks and three labelled answers.

Built from a dataset's Q&A pairs, deterministically (no randomness, no model):

- a question qualifies when it is outside the dataset's dev split and its reference answer states key
  facts (numbers, amounts, percentages, codes: :mod:`rag_lab.evaluate.facts.key_facts`);
- its contexts are at most ``MAX_CHUNKS`` chunks of its source PDF, picked greedily to support as
  many of the reference's sentences as possible (ties: question words shared, then chunk order). A
  sentence is supported when the contexts state every key fact of it and at least
  ``MIN_TERM_COVERAGE`` of its content words (a lexical proxy, no model);
- its reference is the reference answer's supported sentences, in order (the source footer
  ``--- *Document Source: …*`` dropped); a question whose kept reference has no key fact the
  contexts state is left out. Keeping only supported sentences is what makes ``supported`` true of
  the answer as a whole, not only of its numbers;
- ``supported``: that reference;
- ``changed_fact``: the reference with one key fact the contexts state changed to a value they do
  not state (every occurrence; money first, then percentages, program years and years, then other
  numbers ≥ 2): a year or program year moves by one, other numbers by about a quarter;
- ``added_claim``: the reference plus one sentence from ``UNSUPPORTED_SENTENCES`` (chosen by a hash
  of the question id) whose numbers the contexts do not state.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bm25s.stopwords import STOPWORDS_EN

from rag_lab.evaluate.facts.figures import NUMBER_LITERAL, is_year
from rag_lab.evaluate.facts.key_facts import extract_key_facts
from rag_lab.tokenizer import canonical_number, iter_terms

MAX_CHUNKS = 3
MIN_TERM_COVERAGE = 0.55
LABELS = ("supported", "changed_fact", "added_claim")
# with the answers numbers cannot catch (validation_kinds.py); "swapped_entity" only where a name qualifies
ALL_LABELS = LABELS + ("negated", "swapped_entity")

# A numeric literal as the tokenizer reads one: 4,106  4106  8.50 (never a trailing comma).
_NUMBER = re.compile(rf"(?<![\w.,])({NUMBER_LITERAL})(?![\d]|,\d)")
_STOPWORDS = frozenset(STOPWORDS_EN)
_PROGRAM_YEAR = re.compile(r"\b(?:BCY|FFY|SFY|FY|PY)\s?-?\s?$", re.IGNORECASE)

# Claims about the program that none of the dataset's documents make; ``{n}`` is a number the
# contexts do not state.
UNSUPPORTED_SENTENCES = (
    "This rule was first adopted by the Texas Legislature in {year}.",
    "Providers that do not comply are fined ${n} for each day of non-compliance.",
    "About {pct}% of the families who apply are approved within two weeks.",
    "Local boards must send these figures to the federal government every {small} months.",
    "The program is paid for by a grant of ${n} million from a private foundation.",
    "Parents can appeal any of these decisions within {small} days by calling the TWC hotline.",
    "A survey of {n} Texas parents found that most of them preferred this approach.",
    "The same requirement applies to after-school programs for children up to age {teen}.",
)


@dataclass(frozen=True)
class NumberSpan:
    start: int
    end: int
    text: str
    kind: str  # money | percent | program_year | year | number

    @property
    def value(self) -> str:
        return canonical_number(self.text)


def numbers_in(text: str) -> list[NumberSpan]:
    """Every numeric literal of ``text`` with what it is (from the characters around it)."""
    spans = []
    for m in _NUMBER.finditer(text):
        before, after = text[max(0, m.start() - 12):m.start()], text[m.end():m.end() + 9]
        value = canonical_number(m.group(1))
        if before.endswith(("$", "$ ")) or re.match(r"\s?(?:dollars?|USD)\b", after):
            kind = "money"
        elif re.match(r"\s?(?:%|percent\b)", after):
            kind = "percent"
        elif _PROGRAM_YEAR.search(before):
            kind = "program_year"
        elif is_year(value, last=2100):  # the bound the built set was made with
            kind = "year"
        else:
            kind = "number"
        spans.append(NumberSpan(m.start(), m.end(), m.group(1), kind))
    return spans


def stated_numbers(text: str) -> set[str]:
    return {span.value for span in numbers_in(text)}


def _format_like(original: str, value: float) -> str:
    decimals = len(original.split(".")[1]) if "." in original else 0
    return f"{value:,.{decimals}f}" if "," in original else f"{value:.{decimals}f}"


def _candidates(span: NumberSpan) -> Iterable[str]:
    """New values for ``span``, nearest first: ±1 for (program) years, steps of about a quarter
    otherwise (downwards for a percentage that would pass 100)."""
    number = float(span.value)
    if span.kind in ("year", "program_year"):
        for step in (1, -1, 2, -2, 3):
            yield str(int(number) + step).zfill(len(span.text))
        return
    step = max(1.0, math.ceil(number * 0.25)) if "." not in span.text else max(number * 0.25, 0.01)
    for k in range(1, 12):
        up = number + k * step
        yield _format_like(span.text, up if not (span.kind == "percent" and up > 100) else number - k * step)


_PRIORITY = {"money": 0, "percent": 1, "program_year": 2, "year": 3, "number": 4}


def change_one_fact(reference: str, contexts_text: str) -> tuple[str, dict[str, str]] | None:
    """``reference`` with one key fact the contexts state changed to a value they do not state
    (every occurrence), and ``{"from", "to", "kind"}``; None when no fact qualifies."""
    in_contexts = stated_numbers(contexts_text)
    spans = [s for s in numbers_in(reference) if s.value in in_contexts
             and not (s.kind == "number" and float(s.value) < 2)
             and not reference[max(0, s.start - 1):s.start] == "("]  # not a list number "(1)"
    for span in sorted(spans, key=lambda s: (_PRIORITY[s.kind], s.start)):
        for new in _candidates(span):
            if canonical_number(new) in in_contexts or canonical_number(new) == span.value:
                continue
            occurrences = [s for s in numbers_in(reference) if s.value == span.value]
            changed = reference
            for s in sorted(occurrences, key=lambda s: s.start, reverse=True):
                changed = changed[:s.start] + new + changed[s.end:]
            return changed, {"from": span.text, "to": new, "kind": span.kind}
    return None


def _stable_index(text: str, modulo: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % modulo


def add_unsupported_sentence(question_id: str, reference: str, contexts_text: str) -> tuple[str, str]:
    """``reference`` plus one sentence with numbers the contexts do not state, and the sentence."""
    in_contexts = stated_numbers(contexts_text) | stated_numbers(reference)
    start = _stable_index(question_id, len(UNSUPPORTED_SENTENCES))
    slots = {"year": range(1987, 2000), "n": range(137, 10_000, 211), "pct": range(61, 100, 7),
             "small": range(7, 40, 4), "teen": range(15, 19)}
    for offset in range(len(UNSUPPORTED_SENTENCES)):
        template = UNSUPPORTED_SENTENCES[(start + offset) % len(UNSUPPORTED_SENTENCES)]
        values = {}
        for name, choices in slots.items():
            if "{" + name + "}" in template:
                values[name] = next((str(c) for c in choices if str(c) not in in_contexts), None)
        if all(v is not None for v in values.values()):
            sentence = template.format(**values)
            joiner = "" if reference.endswith((" ", "\n")) else " "
            return reference + joiner + sentence, sentence
    raise ValueError(f"{question_id}: no unsupported sentence fits")  # not reached on real data


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_SOURCE_FOOTER = re.compile(r"\s*-{3,}\s*\*?Document Source:.*$", re.DOTALL)


def reference_sentences(reference: str) -> list[str]:
    """The sentences of a reference answer, without its source footer."""
    body = _SOURCE_FOOTER.sub("", reference).strip()
    return [s.strip() for s in _SENTENCE_END.split(body) if s.strip()]


def content_terms(text: str) -> set[str]:
    """Lower-cased terms of ``text`` without stop words and words of two letters or fewer."""
    return {term.text.lower() for term in iter_terms(text)
            if term.is_domain or (len(term.text) > 2 and term.text.lower() not in _STOPWORDS)}


@dataclass(frozen=True)
class Support:
    """What a set of chunks states: content terms and key facts."""

    terms: frozenset[str] = frozenset()
    facts: frozenset[str] = frozenset()

    @classmethod
    def of(cls, text: str) -> "Support":
        return cls(frozenset(content_terms(text)), frozenset(extract_key_facts(text)))

    def __or__(self, other: "Support") -> "Support":
        return Support(self.terms | other.terms, self.facts | other.facts)

    def supports(self, sentence: str) -> bool:
        terms, facts = _sentence_terms(sentence)
        return facts <= self.facts and len(terms & self.terms) >= MIN_TERM_COVERAGE * len(terms)


@functools.lru_cache(maxsize=4096)
def _sentence_terms(sentence: str) -> tuple[frozenset[str], frozenset[str]]:
    # asked once per candidate chunk of a question: tokenised once
    return frozenset(content_terms(sentence)), frozenset(extract_key_facts(sentence))


def pick_contexts(sentences: list[str], question_words: set[str], chunks: list[tuple[Support, set[str]]],
                  max_chunks: int = MAX_CHUNKS) -> list[int]:
    """Indexes of at most ``max_chunks`` chunks supporting most of ``sentences``: greedily the chunk
    adding most supported sentences (ties: question words shared, then chunk order), until no chunk
    adds one. Empty when no chunk supports any."""
    picked: list[int] = []
    support, count = Support(), 0
    while len(picked) < max_chunks:
        def gain(i: int) -> tuple[int, int, int]:
            both = support | chunks[i][0]
            return sum(both.supports(s) for s in sentences), len(question_words & chunks[i][1]), -i

        best = max((i for i in range(len(chunks)) if i not in picked), key=gain, default=None)
        if best is None or gain(best)[0] <= count:
            return picked
        picked.append(best)
        support, count = support | chunks[best][0], gain(best)[0]
    return picked


def supported_reference(reference: str, contexts: list[dict[str, Any]]) -> str:
    """The sentences of ``reference`` that ``contexts`` support, in order."""
    support = Support.of("\n".join(c["text"] for c in contexts))
    return " ".join(s for s in reference_sentences(reference) if support.supports(s))


def build_item(pair: dict[str, Any], contexts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One validation item (None when its supported reference has no key fact to change)."""
    contexts_text = "\n".join(c["text"] for c in contexts)
    reference = supported_reference(pair["reference_answer"], contexts)
    changed = change_one_fact(reference, contexts_text) if extract_key_facts(reference) else None
    if changed is None:
        return None
    changed_text, change = changed
    added_text, sentence = add_unsupported_sentence(pair["id"], reference, contexts_text)
    return {"id": pair["id"], "question": pair["question"], "source_file": pair["source_file"],
            "contexts": contexts, "reference": reference, "source_reference": pair["reference_answer"],
            "answers": [{"label": "supported", "text": reference},
                        {"label": "changed_fact", "text": changed_text, "change": change},
                        {"label": "added_claim", "text": added_text, "added": sentence}]}


def eligible_pairs(pairs: list[dict[str, Any]], dev_ids: frozenset[str], pdfs: set[str]) -> list[dict[str, Any]]:
    """Pairs outside the dev split, about a PDF of the corpus, whose reference states key facts (by id)."""
    return sorted((p for p in pairs if p["id"] not in dev_ids and p.get("source_file") in pdfs
                   and extract_key_facts(p["reference_answer"])), key=lambda p: p["id"])
