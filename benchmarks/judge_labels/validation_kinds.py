"""Answers numbers cannot catch: a negated statement and a swapped name.

Added to each validation item after its three answers, by the same deterministic builder (no
randomness, no model), both labelled unsupported:

- ``negated``: the reference with its first sentence that has an auxiliary or modal verb ("is",
  "are", "must", "can", "will", …) negated at that verb ("is" → "is not", "can" → "cannot"); a
  reference without one gets "It is not true that …" before its first sentence. Its numbers are the
  reference's: a check of numbers passes it.
- ``swapped_entity``: the reference with one name its contexts state (the first multi-word proper
  name, else the first acronym) replaced, everywhere, by another name of the same form from the
  corpus (the contexts of the set's questions) that its own contexts do not state; a name ending in
  the same word ("… Commission", "… Program") is preferred. Chosen by a hash of the question id.

The pool of names is built from the items' contexts (chunks of the corpus PDFs), never from a
question or reference, so no dev-split question leaks into the set.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from benchmarks.judge_labels.validation_set import reference_sentences
from rag_lab.evaluate.judge.rules import acronyms_in, names_in

HARD_LABELS = ("negated", "swapped_entity")
_AUX = re.compile(r"\b(is|are|was|were|will|must|can|should|may|does|do|has to|have to|would|could)\b(?! not\b)")
_NEGATED = {"can": "cannot", "will": "will not", "does": "does not", "do": "do not"}
def _stable_index(text: str, modulo: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % modulo


def entity_pool(items: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Every name and acronym of the items' contexts, sorted (the corpus' entities); an "acronym" that
    is a word the corpus also writes in lower case ("STATE", "CARE": a heading) is left out."""
    text = "\n".join(c["text"] for item in items for c in item["contexts"])
    words = set(re.findall(r"\b[a-z]+\b", text))
    acronyms = {a for a in acronyms_in(text) if a.lower().rstrip("s") not in words and a.lower() not in words}
    return {"name": sorted(set(names_in(text))), "acronym": sorted(acronyms)}


def negate(reference: str) -> tuple[str, str]:
    """``reference`` with one sentence negated, and the negated sentence."""
    sentences = reference_sentences(reference)
    for sentence in sentences:
        m = _AUX.search(sentence)
        if m:
            verb = m.group(1)
            negated = sentence[:m.start()] + _NEGATED.get(verb, f"{verb} not") + sentence[m.end():]
            return reference.replace(sentence, negated, 1), negated
    first = sentences[0]
    lead = first[0].lower() if first[1:2].islower() else first[0]  # "TWC …" keeps its capitals
    negated = "It is not true that " + lead + first[1:]
    return reference.replace(first, negated, 1), negated


def swap_entity(question_id: str, reference: str, contexts_text: str,
                pool: dict[str, list[str]]) -> tuple[str, dict[str, str]] | None:
    """``reference`` with one name its contexts state replaced by another of the corpus they do not
    state, and ``{"from", "to", "kind"}``; None when the reference names nothing the contexts state."""
    lowered = contexts_text.lower()
    for kind, found in (("name", names_in(reference)), ("acronym", acronyms_in(reference))):
        for entity in (e for e in found if e.lower() in lowered):
            others = [o for o in pool[kind] if o.lower() not in lowered and o.lower() not in reference.lower()
                      and entity.lower() not in o.lower()]
            if not others:
                continue
            same_end = [o for o in others if o.split()[-1] == entity.split()[-1]]
            choices = same_end or others
            new = choices[_stable_index(question_id, len(choices))]
            swapped = re.sub(rf"\b{re.escape(entity)}\b", new, reference)
            return swapped, {"from": entity, "to": new, "kind": kind}
    return None


def with_hard_kinds(item: dict[str, Any], pool: dict[str, list[str]]) -> dict[str, Any]:
    """``item`` with the ``negated`` and (when a name qualifies) ``swapped_entity`` answers added."""
    contexts_text = "\n".join(c["text"] for c in item["contexts"])
    answers = [a for a in item["answers"] if a["label"] not in HARD_LABELS]
    negated_text, sentence = negate(item["reference"])
    answers.append({"label": "negated", "text": negated_text, "negated": sentence})
    swapped = swap_entity(item["id"], item["reference"], contexts_text, pool)
    if swapped is not None:
        answers.append({"label": "swapped_entity", "text": swapped[0], "swap": swapped[1]})
    return {**item, "answers": answers}


def add_hard_kinds(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every item with its negated and swapped-entity answers (the pool: all items' contexts)."""
    pool = entity_pool(items)
    return [with_hard_kinds(item, pool) for item in items]
