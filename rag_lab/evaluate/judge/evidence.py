"""Evidence first, chosen by code: the few passages a statement would come from.

The 1.5B judge reads a two-sentence premise far better than three chunks. ``best_evidence`` ranks a
context's passages (sentences and whole table rows: :func:`grounded.passages`) for one statement by
BM25 over the statement's terms and normalised values (a shared number or year is a rare term, so
it weighs much), and keeps the ``k`` best in the context's order. Deterministic, no model.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from bm25s.stopwords import STOPWORDS_EN

from rag_lab.evaluate.judge.grounded import passages
from rag_lab.evaluate.judge.numeric import values_of

DEFAULT_EVIDENCE_PASSAGES = 3
# A premise longer than this is cut (a table row can be long): the verdict's prompt stays short.
MAX_EVIDENCE_CHARS = 900
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+|\d+")
_STOPWORDS = frozenset(STOPWORDS_EN)
_K1, _B = 1.2, 0.75


def terms(text: str) -> list[str]:
    """Lower-cased words (no stop words, stems cut to 6 letters: "eligible" = "eligibility")
    plus the text's normalised values (:func:`numeric.values_of`)."""
    words = [w.lower()[:6] for w in _WORD.findall(text) if w.lower() not in _STOPWORDS and len(w) > 1]
    return words + sorted(values_of(text))


def best_evidence(statement: str, context: str, k: int = DEFAULT_EVIDENCE_PASSAGES) -> list[str]:
    """The ``k`` passages of ``context`` that best match ``statement`` (BM25), in context order;
    every passage when there are no more than ``k``."""
    return best_passages(statement, passages(context), k)


def best_passages(statement: str, found: list[str], k: int) -> list[str]:
    """The ``k`` of ``found`` that best match ``statement`` (BM25), in their order."""
    if len(found) <= k:
        return found
    docs = [Counter(terms(p)) for p in found]
    lengths = [sum(d.values()) for d in docs]
    mean_length = sum(lengths) / len(lengths) or 1.0
    df = Counter(t for d in docs for t in d)
    n = len(docs)

    def score(i: int) -> float:
        total = 0.0
        for term in set(terms(statement)):
            tf = docs[i].get(term, 0)
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                total += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * lengths[i] / mean_length))
        return total

    ranked = sorted(range(n), key=lambda i: (-score(i), i))[:k]
    return [found[i] for i in sorted(ranked)]


# Factual correctness verifies a claim against the other text (the answer or the reference), a few
# sentences: the whole of it is the premise, shared by every claim of that direction, so llama.cpp's
# prompt cache computes it once per direction, not once per claim. Cut here.
MAX_WHOLE_PREMISE_CHARS = 1500


def whole_text(context: str) -> str:
    """The premise of every claim verified against ``context`` (cut to ``MAX_WHOLE_PREMISE_CHARS``)."""
    return context[:MAX_WHOLE_PREMISE_CHARS]


def evidence_text(statement: str, context: str, k: int) -> str:
    """The premise the judge reads for ``statement``: its ``k`` best passages (``k`` = 0: the whole
    context), cut to ``MAX_EVIDENCE_CHARS``."""
    text = context if k <= 0 else "\n".join(best_evidence(statement, context, k))
    return text if k <= 0 else text[:MAX_EVIDENCE_CHARS]
