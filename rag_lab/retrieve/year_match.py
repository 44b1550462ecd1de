"""Version-aware ranking: a boost for the documents whose program year or legislature the question names.

Several bundled documents are versions of one another (BCY25 vs BCY26 board rates, the ACF-218
report for FFY 2022/2023/2024, the child-care effectiveness report to the 84th–89th Legislature),
and a question usually says which one it means ("BCY 2026", "federal fiscal year 2023", "88th
Legislature"). Each document's versions are read from its file name (``bcy25-…`` → ``bcy25``,
``…-ffy-2022-…`` → ``ffy22``, ``…-ffy2025-2027-…`` → ``ffy25 ffy26 ffy27``, ``…-88-leg`` → ``leg88``),
the question's from the domain tokenizer's codes (:mod:`rag_lab.tokenizer`); a fused result whose
document carries one of the question's versions gains ``weight`` × the first result's score, and
the list is re-sorted (stable: ties keep the fused order). A bare ``fiscal year 2023`` (``fy23``)
matches any fiscal year 2023 (federal or state). Questions that name no version are left as they were.

The effect is written into each result's explanation (``year_match``: the question's versions, the
document's, the ones that matched, the score added), which ``--explain`` shows.
"""

from __future__ import annotations

import re
from functools import lru_cache

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from rag_lab.retrieve.base import check_top_k
from rag_lab.tokenizer import PROGRAM_YEAR_PREFIXES, iter_terms

_VERSION_CODE = re.compile(rf"^(?:{'|'.join(PROGRAM_YEAR_PREFIXES)}|leg)\d+$")
_YEAR_RANGE = re.compile(r"\b(ffy|sfy|fy|bcy|py)[ _-]?((?:19|20)\d{2})[ _-]((?:19|20)\d{2})\b", re.IGNORECASE)
_FILE_LEGISLATURE = re.compile(r"\b(\d{2,3})(?:st|nd|rd|th)?[ _-]+leg(?:islature)?\b", re.IGNORECASE)
_GENERIC_FISCAL = ("fy",)
POOL = 100  # fused results the boost re-ranks before the list is cut to top_k
_FISCAL = ("ffy", "sfy", "fy")


def versions_in_text(text: str) -> set[str]:
    """The program-year and legislature codes the tokenizer finds in ``text`` (``bcy26``, ``leg88``)."""
    return {t.text for t in iter_terms(text) if t.kind == "code" and _VERSION_CODE.match(t.text)}


@lru_cache(maxsize=4096)
def document_versions(filename: str) -> frozenset[str]:
    """The versions a document's file name declares (see the module doc for the spellings)."""
    stem = re.sub(r"\.[A-Za-z0-9]+$", "", filename)
    words = re.sub(r"[_.]+", " ", stem)
    found = versions_in_text(words.replace("-", " "))
    for prefix, first, last in _YEAR_RANGE.findall(words):
        found |= {f"{prefix.lower()}{year % 100:02d}" for year in range(int(first), int(last) + 1)}
    found |= {f"leg{number}" for number in _FILE_LEGISLATURE.findall(words)}
    return frozenset(found)


def _split(code: str) -> tuple[str, str]:
    match = re.match(r"([a-z]+)(\d+)$", code)
    return (match.group(1), match.group(2)) if match else (code, "")


def matched_versions(question: set[str], document: frozenset[str] | set[str]) -> list[str]:
    """The question's versions the document carries; ``fy23`` also meets ``ffy23`` and ``sfy23``."""
    matched = set(question & document)
    for code in question - matched:
        prefix, year = _split(code)
        if prefix in _GENERIC_FISCAL and any(_split(d) in {(p, year) for p in _FISCAL} for d in document):
            matched.add(code)
    return sorted(matched)


def boost_by_year(question: str, results: list[NodeWithScore], weight: float) -> list[NodeWithScore]:
    """``results`` re-ranked with the year boost (module doc); each result's explanation says why."""
    asked = versions_in_text(question)
    if not asked or not results or weight <= 0:
        return results
    added_score = weight * float(results[0].score or 0.0)
    boosted = []
    for result in results:
        carried = document_versions(str(result.node.metadata.get("filename", "")))
        matched = matched_versions(asked, carried)
        added = added_score if matched else 0.0
        score = float(result.score or 0.0) + added
        explanation = dict(result.node.metadata.get("explanation") or {})
        explanation["year_match"] = {"question": sorted(asked), "document": sorted(carried),
                                     "matched": matched, "added": round(added, 6)}
        result.node.metadata["explanation"] = explanation
        boosted.append(NodeWithScore(node=result.node, score=score))
    return sorted(boosted, key=lambda r: -r.score)  # stable: ties keep the fused order


class YearBoostRetriever(BaseRetriever):
    """A fused retriever (built with a wide ``top_k``, e.g. :data:`POOL`), its results re-ranked by
    :func:`boost_by_year` and cut to ``top_k``."""

    def __init__(self, inner: BaseRetriever, weight: float, top_k: int) -> None:
        if weight < 0:
            raise ValueError(f"--year-boost must be ≥ 0, got {weight}")
        self.inner, self.weight, self.top_k = inner, float(weight), check_top_k(top_k)
        self.mode_name = getattr(inner, "mode_name", "fused")
        super().__init__()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return boost_by_year(query_bundle.query_str, self.inner.retrieve(query_bundle), self.weight)[: self.top_k]
