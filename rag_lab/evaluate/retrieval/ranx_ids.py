"""ranx, called in one place: :func:`score_run` is every ranx ``evaluate`` of the package (the IR
runs, the judged samples' MRR/nDCG, the ablation grid, contextual retrieval).

Document ids as ranx sees them: one fixed width, so that its numba kernels compile once. ranx stores
the document ids of a ``Run`` or ``Qrels`` as a numpy ``<U{longest id}`` array, and numba compiles
its kernels once per array type: every new longest-id length (file names run from 10 to 100+
characters) is a fresh compile, 2–70 s each on a loaded 2-core machine, inside the first samples'
scoring. Renaming the documents of one evaluation to ``d00000000``, ``d00000001`` … changes no score
(ranx only compares ids) and leaves one array type for every call. A run's documents, best first,
are :func:`ranked_documents` (used by the IR metrics and the pooled view alike).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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


NO_RESULT = "__no_result__"  # ranx needs one entry per query; this document is never relevant


def score_run(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]],
              metrics: Sequence[str]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """ranx ``metrics`` of ``run`` (query → {document: score}) over its judged queries: the means and
    the scores per metric and query. A query with no results scores zero."""
    from ranx import Qrels, Run, evaluate

    filled = {q: (dict(docs) or {NO_RESULT: 0.0}) for q, docs in run.items() if q in qrels}
    filled, judged = fixed_width_ids(filled, {q: qrels[q] for q in filled})
    ranx_run = Run(filled)
    means = evaluate(Qrels(judged), ranx_run, list(metrics), make_comparable=True)
    if not isinstance(means, dict):  # ranx returns a bare number for a single metric
        means = {metrics[0]: means}
    # ranx keeps its own (sorted) query order: key per-query scores by ranx's ids, never by position.
    per_query = {m: {str(q): float(v) for q, v in ranx_run.scores.get(m, {}).items()} for m in metrics}
    return {m: float(means[m]) for m in metrics}, per_query
