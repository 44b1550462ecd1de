"""LLM query rewrites as a tuning lever: ``QueryFusionRetriever``'s own query generation.

With ``num_queries`` = n > 1, LlamaIndex's ``QueryFusionRetriever`` asks its LLM for n − 1 rewrites
of the question (one completion, its ``QUERY_GEN_PROMPT``, one rewrite a line) and fuses the legs of
the original and of every rewrite by RRF. Here the rewrites come from that same method
(:func:`rag_lab.retrieve.rewrites.generate_rewrites`, which the live retrievers use too); each rewrite's legs are retrieved like a question's
(:func:`~rag_lab.evaluate.ablation.legs.retrieve_legs`, cached), and a configuration's ranking over
all 2·n lists is :func:`fuse_queries` (:func:`rag_lab.retrieve.rewrites.fuse_ranked_lists`, the live
retrievers' fusion) — the grid's formula summed over the queries, the grid's tie
rule (first appearance: original dense, original sparse, then each rewrite's), the grid's cap. With
n = 1 it is exactly the grid's ranking.

Cost: one LLM call per question (n − 1 rewrites in one completion) before any retrieval, plus n − 1
more retrievals per leg; :class:`RewriteCost` records calls, seconds and characters per question.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from rag_lab.evaluate.ablation.grid import MODE_LEGS, Candidates, Config, leg_at
from rag_lab.retrieve.configuration import kernel_axes
from rag_lab.retrieve.post_fusion import post_fusion
from rag_lab.retrieve.registry import engine_fuses
from rag_lab.retrieve.rewrites import RewriteCost, fuse_ranked_lists, generate_rewrites

__all__ = ["RewriteCost", "fuse_queries", "generate_rewrites", "group_rewrites", "rewrite_queries", "rewrite_scores"]

REWRITE_SEP = "~rewrite"


def rewrite_key(llm, question: str, num_queries: int) -> str:
    """What decides a question's rewrites: the generator's identity (provider, model, endpoint; the
    local model by its content) and output settings, QueryFusionRetriever's prompt, n and the
    question. Another generator, prompt or n is another key, so a cached rewrite is never reused for it."""
    import hashlib

    from llama_index.core.retrievers.fusion_retriever import QUERY_GEN_PROMPT

    from rag_lab.models.llm.identity import llm_identity, output_settings

    identity = {"generator": llm_identity(llm), "output": output_settings(llm), "prompt": QUERY_GEN_PROMPT,
                "num_queries": num_queries, "question": question}
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:32]


def rewrite_queries(llm, queries: Mapping[str, str], num_queries: int, run_dir: Path) -> tuple[dict[str, str], RewriteCost]:
    """``{"<qid>~rewrite<i>": text}`` for every question (cached in ``run_dir/rewrites-<n>.jsonl`` by
    :func:`rewrite_key`: a rerun with the same generator asks the LLM nothing; records without a key
    are not reused) and the generation's cost (cached questions add what they cost when generated)."""
    path = Path(run_dir) / f"rewrites-{num_queries}.jsonl"
    done: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "key" in record:
                done[record["key"]] = record
    cost = RewriteCost()
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = {text: rewrite_key(llm, text, num_queries) for text in dict.fromkeys(queries.values())}
    with path.open("a", encoding="utf-8") as handle:
        for qid, text in queries.items():
            key = keys[text]
            if key not in done:
                spent = RewriteCost()
                rewrites = generate_rewrites(llm, text, num_queries, spent)
                done[key] = {"key": key, "question": text, "rewrites": rewrites, "cost": spent.__dict__}
                handle.write(json.dumps(done[key], ensure_ascii=False) + "\n")
            for name, value in done[key]["cost"].items():
                setattr(cost, name, getattr(cost, name) + value)
    out = {f"{qid}{REWRITE_SEP}{i}": r for qid, text in queries.items() for i, r in enumerate(done[keys[text]]["rewrites"])}
    return out, cost


def fuse_queries(lists: Sequence[Candidates], config: Config, doc_of: Mapping[str, str]) -> tuple[str, ...]:
    """``config``'s fused, capped top-k over the original question's legs and its rewrites' (see the module doc)."""
    dense, sparse = MODE_LEGS[config.mode]
    engine_lists = engine_fuses(config.mode)  # the engine's own list at this prefetch, as the grid fuses it
    lists = [tuple([chunk for chunk, _, _ in leg_at(candidates, leg, config.prefetch, engine_lists)[: config.prefetch]]
                   for leg in (dense, sparse))
             for candidates in lists]
    ranked = [chunk for chunk, _ in fuse_ranked_lists(lists, config.k, config.dense_weight, config.sparse_weight)]
    kept = post_fusion(ranked, [(a, a.value_of(config)) for a in kernel_axes()], doc_of.__getitem__, config.top_k)
    return tuple(kept[: config.top_k])


def group_rewrites(questions: Sequence[Candidates], rewrites: Sequence[Candidates]) -> dict[str, list[Candidates]]:
    """qid → [its own candidates, then its rewrites' in order]."""
    grouped = {q.qid: [q] for q in questions}
    for r in sorted(rewrites, key=lambda r: int(r.qid.rsplit(REWRITE_SEP, 1)[1])):
        grouped[r.qid.rsplit(REWRITE_SEP, 1)[0]].append(r)
    return grouped


def rewrite_scores(index, llm, queries: Mapping[str, str], questions: Sequence[Candidates], configs: Sequence[Config],
                   num_queries: int, run_dir: Path, metric: str, qrels, depth: int,
                   progress: bool = True) -> tuple[dict[Config, dict[str, float]], RewriteCost]:
    """Per-question selection scores of ``configs`` searched with ``num_queries`` queries each."""
    from rag_lab.evaluate.ablation.grid import GridResult, GridSpec
    from rag_lab.evaluate.ablation.legs import retrieve_legs
    from rag_lab.evaluate.tune.scores import chunk_documents, selection_scores

    texts, cost = rewrite_queries(llm, queries, num_queries, run_dir)
    modes = tuple(dict.fromkeys(c.mode for c in configs))
    prefetches = sorted({c.prefetch for c in configs if engine_fuses(c.mode)})
    rewrites, _ = retrieve_legs(index, texts, Path(run_dir) / f"rewrites-{num_queries}", modes, depth,
                                progress=progress, prefetches=prefetches) if texts else ([], {})
    grouped = group_rewrites(questions, rewrites)
    doc_of = chunk_documents([*questions, *rewrites])
    grid = GridResult(GridSpec(), list(configs))
    for config in configs:
        grid.chunks[config.id] = {qid: fuse_queries(lists, config, doc_of) for qid, lists in grouped.items()}
        grid.docs[config.id] = {qid: tuple(dict.fromkeys(doc_of[c] for c in chunks))
                                for qid, chunks in grid.chunks[config.id].items()}
    scored = selection_scores(metric, grid, [*questions, *rewrites], qrels)
    return {config: scored[config.id] for config in configs}, cost
