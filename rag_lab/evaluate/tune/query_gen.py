"""LLM query rewrites as a tuning lever: ``QueryFusionRetriever``'s own query generation.

With ``num_queries`` = n > 1, LlamaIndex's ``QueryFusionRetriever`` asks its LLM for n − 1 rewrites
of the question (one completion, its ``QUERY_GEN_PROMPT``, one rewrite a line) and fuses the legs of
the original and of every rewrite by RRF. Here the rewrites come from that same method
(:func:`generate_rewrites`); each rewrite's legs are retrieved like a question's
(:func:`~rag_lab.evaluate.ablation.legs.retrieve_legs`, cached), and a configuration's ranking over
all 2·n lists is :func:`fuse_queries` — the grid's formula summed over the queries, the grid's tie
rule (first appearance: original dense, original sparse, then each rewrite's), the grid's cap. With
n = 1 it is exactly the grid's ranking.

Cost: one LLM call per question (n − 1 rewrites in one completion) before any retrieval, plus n − 1
more retrievals per leg; :class:`RewriteCost` records calls, seconds and characters per question.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag_lab.evaluate.ablation.grid import MODE_LEGS, Candidates, Config
from rag_lab.fusion.rrf import rrf_terms
from rag_lab.retrieve.diversity import cap_per_document

REWRITE_SEP = "~rewrite"


@dataclass
class RewriteCost:
    questions: int = 0
    calls: int = 0
    seconds: float = 0.0
    prompt_chars: int = 0
    completion_chars: int = 0

    def per_question(self) -> dict:
        n = max(self.questions, 1)
        return {"llm_calls": self.calls / n, "seconds": self.seconds / n, "prompt_chars": self.prompt_chars / n,
                "completion_chars": self.completion_chars / n}

    def describe(self) -> str:
        p = self.per_question()
        return (f"{p['llm_calls']:.0f} LLM call(s), {p['seconds']:.2f} s, ≈{(p['prompt_chars'] + p['completion_chars']) / 4:.0f} "
                f"tokens (≈4 characters a token) per question")


def generate_rewrites(llm, question: str, num_queries: int, cost: RewriteCost | None = None) -> list[str]:
    """The ``num_queries − 1`` rewrites ``QueryFusionRetriever`` would search with (its own prompt and parsing)."""
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.retrievers import QueryFusionRetriever

    class _Nothing(BaseRetriever):  # QueryFusionRetriever needs a retriever; only its query generation runs
        def _retrieve(self, query_bundle):
            return []

    if num_queries < 2:
        return []
    fusion = QueryFusionRetriever(retrievers=[_Nothing()], llm=llm, num_queries=num_queries, use_async=False)
    started = time.perf_counter()
    rewrites = [b.query_str for b in fusion._get_queries(question)]  # noqa: SLF001 - the method under study
    if cost is not None:
        cost.questions += 1
        cost.calls += 1
        cost.seconds += time.perf_counter() - started
        cost.prompt_chars += len(fusion.query_gen_prompt.format(num_queries=num_queries - 1, query=question))
        cost.completion_chars += sum(len(r) + 1 for r in rewrites)
    return rewrites


def rewrite_queries(llm, queries: Mapping[str, str], num_queries: int, run_dir: Path) -> tuple[dict[str, str], RewriteCost]:
    """``{"<qid>~rewrite<i>": text}`` for every question (cached in ``run_dir/rewrites-<n>.jsonl``:
    a rerun asks the LLM nothing) and the generation's cost."""
    path = Path(run_dir) / f"rewrites-{num_queries}.jsonl"
    done: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            done[record["question"]] = record
    cost = RewriteCost()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for qid, text in queries.items():
            if text not in done:
                spent = RewriteCost()
                rewrites = generate_rewrites(llm, text, num_queries, spent)
                done[text] = {"question": text, "rewrites": rewrites, "cost": spent.__dict__}
                handle.write(json.dumps(done[text], ensure_ascii=False) + "\n")
            for key, value in done[text]["cost"].items():
                setattr(cost, key, getattr(cost, key) + value)
    out = {f"{qid}{REWRITE_SEP}{i}": r for qid, text in queries.items() for i, r in enumerate(done[text]["rewrites"])}
    return out, cost


def fuse_queries(lists: Sequence[Candidates], config: Config, doc_of: Mapping[str, str]) -> tuple[str, ...]:
    """``config``'s fused, capped top-k over the original question's legs and its rewrites' (see the module doc)."""
    dense, sparse = MODE_LEGS[config.mode]
    order: dict[str, None] = {}
    score: dict[str, float] = {}
    for candidates in lists:
        for leg, weight in ((dense, config.dense_weight), (sparse, config.sparse_weight)):
            hits = candidates.legs.get(leg, [])[: config.prefetch]
            terms = rrf_terms(np.arange(1, len(hits) + 1), config.k, weight) if hits else []
            for (chunk, _, _), term in zip(hits, terms):
                if term <= 0:  # a leg weighted 0 contributes nothing, as in the grid
                    continue
                order.setdefault(chunk, None)
                score[chunk] = score.get(chunk, 0.0) + float(term)
    ranked = sorted(order, key=lambda c: -score[c])  # stable: ties keep first appearance
    kept, _ = cap_per_document(ranked, doc_of.__getitem__, config.max_per_doc, config.top_k)
    return tuple(chunk for _, chunk in kept)


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
    rewrites, _ = retrieve_legs(index, texts, Path(run_dir) / f"rewrites-{num_queries}", modes, depth,
                                progress=progress) if texts else ([], {})
    grouped = group_rewrites(questions, rewrites)
    doc_of = chunk_documents([*questions, *rewrites])
    grid = GridResult(GridSpec(), list(configs))
    for config in configs:
        grid.chunks[config.id] = {qid: fuse_queries(lists, config, doc_of) for qid, lists in grouped.items()}
        grid.docs[config.id] = {qid: tuple(dict.fromkeys(doc_of[c] for c in chunks))
                                for qid, chunks in grid.chunks[config.id].items()}
    scored = selection_scores(metric, grid, [*questions, *rewrites], qrels)
    return {config: scored[config.id] for config in configs}, cost
