"""Document ids as ranx sees them: one fixed width, so that its numba kernels compile once.

ranx stores the document ids of a ``Run`` or ``Qrels`` as a numpy ``<U{longest id}`` array, and numba
compiles its kernels once per array type: every new longest-id length (file names run from 10 to
100+ characters) was a fresh compile, 2–70 s each on a loaded 2-core machine, inside the first
samples' scoring. Renaming the documents of one evaluation to ``d00000000``, ``d00000001`` … changes
no score (ranx only compares ids) and leaves one array type for every call. A run's documents,
best first, are :func:`ranked_documents` (used by the IR metrics and the pooled view alike).
"""

from __future__ import annotations

from collections.abc import Mapping

def ranked_documents(docs: Mapping[str, float]) -> list[str]:
    """Document keys best first (ties in retrieval order: the order ``fold_to_documents`` met them)."""
    return [d for d, _ in sorted(docs.items(), key=lambda item: -item[1])]


_DIGITS = 8  # 10^8 documents per call; beyond that the width grows (one more compile, still correct)


def fixed_width_ids(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
                    ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """``run`` and ``qrels`` with every document id replaced by a fixed-width one (the same
    document keeps the same new id in both); query ids are unchanged."""
    ids: dict[str, str] = {}

    def rename(doc: str) -> str:
        return ids.setdefault(doc, f"d{len(ids):0{_DIGITS}d}")

    return ({q: {rename(d): s for d, s in docs.items()} for q, docs in run.items()},
            {q: {rename(d): g for d, g in docs.items()} for q, docs in qrels.items()})
