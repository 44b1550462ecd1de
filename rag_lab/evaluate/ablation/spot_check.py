"""The spot check: live queries through the real retriever against the grid's ranking of the
same configuration, at every prefetch value of the grid (a top-p leg must be a prefix of the
deepest leg, which ties broken by a stable key guarantee; this is where a violation would show)."""

from __future__ import annotations

from rag_lab.evaluate.ablation.grid import Config, GridResult, GridSpec

SPOT_QUESTIONS = 3  # questions checked per prefetch value


def spot_check(index, questions, queries: dict[str, str], grid: GridResult, spec: GridSpec,
               n_questions: int = SPOT_QUESTIONS) -> dict:
    """Hybrid (Qdrant's own RRF) when the grid has it, else fusion; the default k, the first weight
    pair, the largest top-k, every prefetch value at the baseline cap of chunks per document, and
    each other cap at the largest prefetch (the live retriever applies the cap itself), × the first
    ``n_questions`` questions.

    Returns the summary the manifest records: ``equal`` (every check), ``checks`` (one per
    prefetch × question) and, at the top level, the first differing check (else the last)."""
    from rag_lab.retrieve.fusion import FusionRetriever
    from rag_lab.retrieve.hybrid import HybridRetriever

    mode = "hybrid" if "hybrid" in spec.modes else spec.modes[0]
    weights = spec.weights[0]
    cls = HybridRetriever if mode == "hybrid" else FusionRetriever
    checks = []
    cap = spec.baseline_max_per_doc  # the grid holds no uncapped ranking when its caps leave out 0
    points = [(p, cap) for p in sorted(spec.prefetch)] + [(max(spec.prefetch), c) for c in spec.max_per_doc if c != cap]
    for prefetch, max_per_doc in points:
        config = Config(mode, spec.baseline_k, prefetch, *weights, max(spec.top_k), max_per_doc)
        retriever = cls(index, top_k=config.top_k, prefetch=prefetch, rrf_k=config.k,
                        dense_weight=weights[0], sparse_weight=weights[1], max_per_doc=max_per_doc)
        for question in questions[:n_questions]:
            qid = question.qid
            live = [r.node.node_id for r in retriever.retrieve(queries[qid])]
            computed = list(grid.chunks[config.id][qid])
            checks.append({"config": config.id, "prefetch": prefetch, "qid": qid, "query": queries[qid],
                           "live": live, "grid": computed, "equal": live == computed})
    shown = next((c for c in checks if not c["equal"]), checks[-1])
    return {"mode": mode, **shown, "equal": all(c["equal"] for c in checks), "checks": checks,
            "prefetch_values": sorted(spec.prefetch),
            "what": "Qdrant's own RRF (query_points with prefetch + RrfQuery)" if mode == "hybrid"
            else "the fusion retriever"}
