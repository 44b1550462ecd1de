"""What each metric of a report measures, in one line, and where it stops counting (its cut-off).

The answer and context metrics are the registry's own (:class:`MetricSpec.description`); the ranx
metrics are named here. An evaluation run scores the chunks given to the LLM (top-n), so its
context metrics stop there; an IR comparison scores the retriever's ranking at each metric's @k.
"""

from __future__ import annotations

import re

RANKING = {
    "ndcg": "rank-discounted gain of the relevant documents, over the best possible order (ranx nDCG)",
    "mrr": "1 / rank of the first relevant document, 0 when none (ranx MRR)",
    "recall": "share of the relevant documents retrieved (ranx recall)",
    "precision": "share of the retrieved documents that are relevant (ranx precision)",
    "map": "mean of the precision at each relevant document's rank (ranx MAP)",
    "hit_rate": "1 when a relevant document is retrieved, else 0 (ranx hit rate)",
    "chunk_hit": "1 when a relevant document owns one of the first chunks of the ranked list, else 0",
    "judged": "share of the top documents that carry a relevance judgement (coverage, never tested)",
}
CONVERSATION = {
    "turn_expected_content": "share of a turn's expected strings the reply contains",
    "turn_pass": "1 when a turn's expected content reaches its pass mark, else 0",
}
COVERAGE = {
    "context_key_fact_coverage": "share of the reference's key facts (the question's left out) that the chunks "
                                 "given to the LLM state: what retrieval left for the answer",
    "evidence_key_fact_coverage": "share of the reference's key facts (the question's left out) that the evidence "
                                  "selected for an evidence-first answer states: what selection left for the writing",
}
# metrics that read the chunks given to the LLM; every other registry metric reads the answer alone
CONTEXT_METRICS = {"id_context_precision", "id_context_recall", "faithfulness", "citation_precision",
                   "figures_in_context", "figures_in_place",
                   "llm_context_precision_with_reference", "llm_context_recall", "context_key_fact_coverage"}


def definition(metric: str) -> str:
    """One line: what ``metric`` measures ("" for a metric nothing here knows)."""
    from rag_lab.evaluate.metrics import all_specs

    specs = {s.name: s.description for s in all_specs()}
    if metric in specs:
        return specs[metric]
    if metric in CONVERSATION:
        return CONVERSATION[metric]
    if metric in COVERAGE:
        return COVERAGE[metric]
    return RANKING.get(re.split(r"@", metric, maxsplit=1)[0], "")


def cutoff(metric: str, top_n: int | None = None) -> str:
    """Where ``metric`` stops counting: its @k, the top-n chunks the LLM read, or the whole answer."""
    match = re.fullmatch(r"([a-z_]+)@(\w+)", metric)
    if match:
        name, k = match.groups()
        if k == "top_k":
            return "the configuration's top-k"
        if name == "chunk_hit":
            return f"first {k} chunks"
        return f"first {k} documents" + (" of the chunks the LLM read" if top_n else "")
    chunks = f"the top-{top_n} chunks the LLM read" if top_n else "the chunks the LLM read"
    if metric in CONTEXT_METRICS:
        return chunks
    if metric == "evidence_key_fact_coverage":
        return "the evidence selected from " + chunks
    if metric in CONVERSATION:
        return "each turn's reply"
    return "whole answer (no cut-off)" if definition(metric) else "—"
