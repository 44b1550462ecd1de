"""Failure analysis of an evaluation run: the worst questions per mode with what was retrieved,
what the answer cited and why it scored low (used by ``notebooks/06_failure_analysis.ipynb``).

    run = load_run("runs/failures")
    worst_samples(run, "key_fact_recall", n=5)   # one row per (mode, worst question)
    score_matrix(run, "key_fact_recall")         # questions × modes, hardest questions first

Scores come from the run's tidy ``samples`` (NaN = the metric failed: left out of the ranking);
everything else from the per-sample records of ``<run>/<mode>/samples.jsonl`` (``run.records``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

WORST_COLUMNS = ["mode", "rank", "sample_id", "metric", "value", "diagnosis", "question", "reference", "answer",
                 "missing_facts", "relevant", "cited", "cited_relevant", "retrieved", "first_relevant_rank", "error"]


def _source(source: Any) -> str:
    if isinstance(source, dict):
        page = source.get("page")
        return f"{source.get('doc')}" + (f" p.{page}" if page is not None else "")
    return str(source)


def _relevant_docs(record: dict[str, Any]) -> list[str]:
    return [str(d) for d in (record.get("relevant") or {})] or [str(d) for d in record.get("source_files") or []]


def retrieved_list(record: dict[str, Any], relevant: Sequence[str] = ()) -> list[str]:
    """The chunks given to the LLM, in rank order: ``"✓ file p.N (score)"`` (✓ = a relevant document)."""
    out = []
    for ctx in record.get("contexts") or []:
        name = ctx.get("filename") or ctx.get("doc_id")
        hit = ctx.get("doc_id") in relevant or ctx.get("filename") in relevant
        page = f" p.{ctx['page']}" if ctx.get("page") is not None else ""
        score = ctx.get("score")
        out.append(f"{'✓ ' if hit else ''}{name}{page}" + (f" ({score:.4g})" if isinstance(score, (int, float)) else ""))
    return out


def first_relevant_rank(record: dict[str, Any], relevant: Sequence[str]) -> int | None:
    """Rank (from 1) of the first chunk from a relevant document among the contexts, else None."""
    for position, ctx in enumerate(record.get("contexts") or [], start=1):
        if ctx.get("doc_id") in relevant or ctx.get("filename") in relevant:
            return int(ctx.get("rank") or position)
    return None


def diagnose(record: dict[str, Any]) -> str:
    """Where a sample went wrong, from its record alone: an error, retrieval (no relevant document
    among the chunks the LLM saw), or generation (the relevant document was there)."""
    if record.get("error"):
        return "error"
    relevant = _relevant_docs(record)
    if not relevant:
        return "no relevance judgement"
    if first_relevant_rank(record, relevant) is None:
        return "retrieval: no relevant document retrieved"
    from rag_lab.answer.statements import is_non_answer

    if str(record.get("answer") or "").strip() and is_non_answer(record["answer"]):
        return "generation: non-answer (quotes only, no statement of its own)"
    cited = {str(c.get("doc")) if isinstance(c, dict) else str(c) for c in record.get("cited_sources") or []}
    if not cited:
        return "generation: relevant document retrieved, nothing cited"
    if not cited & set(relevant):
        return "generation: relevant document retrieved, another cited"
    return "generation: relevant document cited"


def sample_details(record: dict[str, Any]) -> dict[str, Any]:
    """What a record says about one answer: question, reference, answer, the reference's key facts
    (less the question's) the answer misses, relevant / cited / retrieved documents, and a diagnosis."""
    from rag_lab.evaluate.facts.key_facts import missing_key_facts

    relevant = _relevant_docs(record)
    cited_docs = [str(c.get("doc")) if isinstance(c, dict) else str(c) for c in record.get("cited_sources") or []]
    reference = record.get("reference")
    answer = record.get("answer")
    return {
        "diagnosis": diagnose(record),
        "question": record.get("question"),
        "reference": reference,
        "answer": answer,
        "missing_facts": missing_key_facts(answer or "", reference, record.get("question")) if reference else [],
        "relevant": relevant,
        "cited": [_source(c) for c in record.get("cited_sources") or []],
        "cited_relevant": bool(set(cited_docs) & set(relevant)),
        "retrieved": retrieved_list(record, relevant),
        "first_relevant_rank": first_relevant_rank(record, relevant),
        "error": record.get("error"),
    }


def worst_samples(run, metric: str, n: int = 5, modes: Sequence[str] | None = None):
    """The ``n`` lowest-scoring samples of each mode by ``metric`` (ties by sample id), each with
    its details (:func:`sample_details`). Samples the metric does not apply to, or failed on
    (NaN), are not ranked."""
    import pandas as pd

    samples = run.samples
    scored = samples[(samples["metric"] == metric) & samples["value"].notna()]
    rows = []
    for mode in modes if modes is not None else list(run.records):
        by_id = {str(r.get("id")): r for r in run.records.get(mode, [])}
        worst = scored[scored["mode"] == mode].assign(_id=lambda f: f["sample_id"].astype(str))
        worst = worst.sort_values(["value", "_id"], kind="stable").head(n)
        for rank, (_, row) in enumerate(worst.iterrows(), start=1):
            rows.append({"mode": mode, "rank": rank, "sample_id": row["sample_id"], "metric": metric,
                         "value": float(row["value"]), **sample_details(by_id.get(row["_id"], {}))})
    frame = pd.DataFrame(rows, columns=WORST_COLUMNS)
    frame["first_relevant_rank"] = frame["first_relevant_rank"].astype("Int64")  # None stays missing, not 1.0/NaN
    return frame


def score_matrix(run, metric: str, modes: Sequence[str] | None = None):
    """Questions × modes of one metric (NaN where unscored), the hardest questions (lowest mean over
    the modes) first; the columns follow ``modes`` (default: the run's order)."""
    samples = run.samples
    frame = samples[samples["metric"] == metric]
    modes = list(modes) if modes is not None else [m for m in run.records if m in set(frame["mode"])]
    table = frame[frame["mode"].isin(modes)].pivot_table(index="sample_id", columns="mode", values="value",
                                                         aggfunc="first", dropna=False)
    table = table.reindex(columns=[m for m in modes if m in table.columns])
    order = table.mean(axis=1, skipna=True).sort_values(kind="stable").index
    table = table.loc[order]
    table.columns.name = None
    return table
