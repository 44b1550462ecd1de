"""Scores of every ablation configuration, per query.

- IR metrics with ranx at each configuration's top-k (``ndcg@top_k`` = ranx ``ndcg@k``, k the
  row's top-k, on the documents folded from its top-k chunks), in one ``evaluate`` call per top-k:
  every distinct (question, document ranking) pair becomes one ranx query (many configurations rank
  a question's documents identically, so this is also far less work), and per-query scores are
  mapped back.
- Document-level, ID-based context precision and recall through RAGAS's own metrics
  (``IDBasedContextPrecision`` / ``IDBasedContextRecall``) where the judged documents are the
  source files of Q&A pairs; again scored once per distinct (retrieved, reference) pair.

Results are ``per_query[config_id][metric][qid] → score``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence

from concurrent.futures import ThreadPoolExecutor

from rag_lab.evaluate.ablation.grid import GridResult

# ranx metrics cut at each configuration's top-k, on the documents folded from its top-k chunks:
# precision@k divides by k (not by the number of distinct documents), nDCG@k's ideal ranking holds
# min(k, relevant) documents. Recall and MRR of a ≤ k-long list are the same with or without the cut.
IR_METRICS = ("ndcg", "recall", "precision", "mrr")
CUTOFF = "@top_k"  # how results.csv names them: ndcg@top_k = ranx ndcg@k with k = the row's top_k
CONTEXT_METRICS = ("id_context_precision", "id_context_recall")

PerQuery = dict[str, dict[str, dict[str, float]]]


def metric_name(metric: str) -> str:
    """The results.csv name of a grid IR metric (``ndcg`` → ``ndcg@top_k``)."""
    return f"{metric}{CUTOFF}"


def ir_per_query(docs: Mapping[str, Mapping[str, Sequence[str]]], qrels: Mapping[str, Mapping[str, int]],
                 metrics: Sequence[str] = IR_METRICS, cutoffs: Mapping[str, int] | None = None) -> PerQuery:
    """``docs[config][qid]`` = ranked document keys → ranx scores per config, metric and query.

    ``cutoffs[config]``: the top-k each configuration's metrics are cut at (ranx ``metric@k``), and
    the results are named ``metric@top_k``; without it, ranx's uncut metrics under their plain names.
    Ranked lists are scored as given (rank order, not score order: ties cannot reorder them).
    Queries without judgements are left out. One ranx ``evaluate`` per distinct cut-off, over the
    distinct (question, ranking) pairs of every configuration.
    """
    from rag_lab.evaluate.retrieval.ranx_ids import score_run

    names = {m: metric_name(m) if cutoffs is not None else m for m in metrics}
    result: PerQuery = {config: {names[m]: {} for m in metrics} for config in docs}
    by_cutoff: dict[int | None, list[str]] = {}
    for config in docs:
        by_cutoff.setdefault(None if cutoffs is None else int(cutoffs[config]), []).append(config)
    for cutoff, configs in by_cutoff.items():
        keys: dict[tuple[str, tuple[str, ...]], str] = {}
        run: dict[str, dict[str, float]] = {}
        judged: dict[str, dict[str, int]] = {}
        for config in configs:
            for qid, ranked in docs[config].items():
                if qid not in qrels or (qid, tuple(ranked)) in keys:
                    continue
                ranked = tuple(ranked)
                key = keys[(qid, ranked)] = f"r{len(keys)}"
                run[key] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
                judged[key] = {d: int(g) for d, g in qrels[qid].items()}
        if not run:
            continue
        ranx_names = {m: m if cutoff is None else f"{m}@{cutoff}" for m in metrics}
        _, by_name = score_run(run, judged, list(ranx_names.values()))
        scores = {m: by_name[ranx_names[m]] for m in metrics}
        for config in configs:
            for qid, ranked in docs[config].items():
                key = keys.get((qid, tuple(ranked)))
                if key is not None:
                    for m in metrics:
                        result[config][names[m]][qid] = scores[m][key]
    return result


def context_per_query(docs: Mapping[str, Mapping[str, Sequence[str]]],
                      references: Mapping[str, Sequence[str]]) -> PerQuery:
    """RAGAS ID-based context precision / recall of the retrieved documents against each question's
    reference documents (its source files). Questions with no reference are left out."""
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    from ragas import SingleTurnSample
    # The classes `ragas.metrics` re-exports (deprecated there; `ragas.metrics.collections` has no
    # ID-based variant in 0.4.3), imported from where they live.
    from ragas.metrics._context_precision import IDBasedContextPrecision
    from ragas.metrics._context_recall import IDBasedContextRecall

    scorers = {"id_context_precision": IDBasedContextPrecision(), "id_context_recall": IDBasedContextRecall()}
    pairs: dict[tuple[tuple[str, ...], tuple[str, ...]], None] = {}
    for per_q in docs.values():
        for qid, ranked in per_q.items():
            reference = tuple(references.get(qid) or ())
            if reference:
                pairs.setdefault((tuple(ranked), reference), None)
    keys = list(pairs)
    samples = [SingleTurnSample(retrieved_context_ids=list(r), reference_context_ids=list(ref)) for r, ref in keys]

    async def score_all():
        return {name: await asyncio.gather(*(s.single_turn_ascore(x) for x in samples))
                for name, s in scorers.items()}

    # RAGAS's async API in a loop of our own (a thread, so a notebook's running loop is no obstacle):
    # ~0.5 ms per distinct pair instead of ~2 ms through the sync wrapper.
    with ThreadPoolExecutor(max_workers=1) as pool:
        scored = pool.submit(asyncio.run, score_all()).result()
    cache = {key: {name: float(values[i]) for name, values in scored.items()} for i, key in enumerate(keys)}
    result: PerQuery = {config: {m: {} for m in CONTEXT_METRICS} for config in docs}
    for config, per_q in docs.items():
        for qid, ranked in per_q.items():
            reference = tuple(references.get(qid) or ())
            if not reference:
                continue
            for name, value in cache[(tuple(ranked), reference)].items():
                result[config][name][qid] = value
    return result


def grid_per_query(grid: GridResult, qrels: Mapping[str, Mapping[str, int]],
                   references: Mapping[str, Sequence[str]] | None = None) -> PerQuery:
    """IR metrics for every configuration, plus RAGAS ID-based context metrics when ``references``
    (source files per question) are given."""
    top_k = {config.id: config.top_k for config in grid.configs}
    per_query = ir_per_query(grid.docs, qrels, cutoffs=top_k)
    if references:
        for config, metrics in context_per_query(grid.docs, references).items():
            per_query[config].update(metrics)
    return per_query
