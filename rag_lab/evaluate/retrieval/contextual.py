"""Plain vs contextual index, per retrieval mode: document hit@k and MRR over every judged
question, with seeded bootstrap 95 % intervals and paired significance (the lab's comparison policy,
:mod:`rag_lab.evaluate.statistics.policy`: its decision test, Holm over modes × metrics), plus what the
contexts cost (calls, tokens, time). ``ablate --contextual`` answers the same question on the grid's
baseline configurations with the same policy.

Used by ``notebooks/07_contextual_retrieval.ipynb``; every number comes from ranx over the same
query runs the IR command makes (``run_mode``, checkpointed per index fingerprint).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.retrieval.ir import run_mode, score_run
from rag_lab.index import CorpusIndex, build_index
from rag_lab.retrieve import INDEX_MODES


@dataclass
class ContextualComparison:
    dataset: str
    variant: str
    k: int
    n_queries: int
    table: "pandas.DataFrame"  # noqa: F821  one row per mode × metric
    per_query: dict[str, dict[str, dict[str, float]]] = field(repr=False)  # "<mode>/<variant>" → metric → qid → score
    cost: dict = field(default_factory=dict)  # the variant's build report (LLM calls, tokens, time)
    built_at: dict = field(default_factory=dict)

    def metric_names(self) -> tuple[str, str]:
        return f"hit_rate@{self.k}", "mrr"


def compare_contextual(
    dataset: Dataset, settings: Settings, variant: str = "annotations", modes: Sequence[str] = INDEX_MODES,
    k: int = 5, *, build: bool = True, yes: bool = False, resume: bool = True, progress: bool = True,
    n_resamples: int = 2000, seed: int = 42, limit: int | None = None,
) -> ContextualComparison:
    """Run every judged question (or the first ``limit``) through each mode on the plain and the
    ``variant`` index."""
    import pandas as pd

    from rag_lab.evaluate.statistics import policy
    from rag_lab.evaluate.statistics.significance import bootstrap_ci

    if variant == "none":
        raise ValueError("compare a contextual variant (annotations, llm, both) against the plain index")
    queries, qrels = dataset.load_queries(), dataset.load_qrels()
    queries = {q: t for q, t in queries.items() if q in qrels}
    if limit:
        queries = dict(list(queries.items())[:limit])
    if build:
        build_index(dataset, settings, progress=progress)
        build_index(dataset, settings, progress=progress, contextual=variant, yes=yes)
    metrics = (f"hit_rate@{k}", "mrr")
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    for mode in modes:
        for name in ("none", variant):
            run = run_mode(mode, dataset, settings, queries, None, progress, resume, contextual=name).run
            _, scores = score_run(run, qrels, metrics)
            per_query[f"{mode}/{name}"] = scores
    rows = []
    for mode in modes:
        for metric in metrics:
            plain, ctx = per_query[f"{mode}/none"][metric], per_query[f"{mode}/{variant}"][metric]
            ids = sorted(set(plain) & set(ctx))
            a, b = [plain[q] for q in ids], [ctx[q] for q in ids]
            ci_a, ci_b = bootstrap_ci(a, n_resamples=n_resamples, seed=seed), bootstrap_ci(b, n_resamples=n_resamples, seed=seed)
            rows.append({
                "mode": mode, "metric": metric, "n": len(ids),
                "plain": ci_a["mean"], "plain_low": ci_a["ci_low"], "plain_high": ci_a["ci_high"],
                variant: ci_b["mean"], f"{variant}_low": ci_b["ci_low"], f"{variant}_high": ci_b["ci_high"],
                "delta": ci_b["mean"] - ci_a["mean"], **dict(zip(("p_value", "decided_by"),
                                                                    policy.decide_pair(a, b, seed)[:2])),
            })
    table = pd.DataFrame(rows)
    table["p_holm"] = policy.adjust(table["p_value"])
    table["significant"] = policy.is_significant(table["p_holm"])
    plain_manifest = CorpusIndex.open(dataset, settings).manifest
    ctx_manifest = CorpusIndex.open(dataset, settings, variant).manifest
    return ContextualComparison(
        dataset.name, variant, k, len(queries), table, per_query, cost=ctx_manifest.contextual_report,
        built_at={"plain": plain_manifest.built_at, variant: ctx_manifest.built_at},
    )


def cost_frame(comparison: ContextualComparison) -> "pandas.DataFrame":  # noqa: F821
    """One row: what building the variant's contexts took (annotations need no LLM call)."""
    import pandas as pd

    report = comparison.cost or {}
    llm = report.get("llm") or {}
    return pd.DataFrame([{
        "variant": comparison.variant, "chunks": report.get("chunks"), "annotated": report.get("annotated"),
        "llm_calls": llm.get("calls", 0), "retries": llm.get("retries", 0), "from_cache": llm.get("from_cache", 0),
        "prompt_tokens": llm.get("prompt_tokens", 0), "completion_tokens": llm.get("completion_tokens", 0),
        "llm_seconds": llm.get("seconds", 0.0), "uncontextualised": llm.get("uncontextualised", 0),
    }])
