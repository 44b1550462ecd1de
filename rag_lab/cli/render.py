"""Plain-text and JSON views of retrieval results."""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llama_index.core.schema import NodeWithScore


def _fmt(value, spec: str = ".4f") -> str:
    return "—" if value is None else format(value, spec)


def render_results(results: list[NodeWithScore], explain: bool = False) -> str:
    if not results:
        return "no results"
    lines = []
    for rank, result in enumerate(results, start=1):
        meta = result.node.metadata
        page = f", page {meta['page']}" if meta.get("page") is not None else ""
        lines.append(f"{rank:>2}. [{result.score:.4f}] {meta.get('filename')}{page}")
        snippet = " ".join(result.node.get_content().split())[:240]
        lines.append(textwrap.indent(textwrap.fill(snippet, 96), "     "))
        e = meta.get("explanation")
        if explain and e and "dense_rank" in e:
            lines.append(
                f"     dense rank {_fmt(e['dense_rank'], 'd') if e['dense_rank'] else '—'} "
                f"(score {_fmt(e['dense_score'])}) → term {e['dense_term']:.6f} | "
                f"sparse rank {_fmt(e['sparse_rank'], 'd') if e['sparse_rank'] else '—'} "
                f"(score {_fmt(e['sparse_score'])}) → term {e['sparse_term']:.6f} | "
                f"fused {e['fused_score']:.6f} = {e['dense_term']:.6f} + {e['sparse_term']:.6f} [{e['source']}]"
            )
            if e.get("max_per_doc"):
                skipped = e.get("skipped_by_cap") or []
                lines.append(f"     fused rank {e['fused_rank']}" + (
                    "; skipped above it by the cap (max " + str(e["max_per_doc"]) + " chunks per document): "
                    + ", ".join(f"rank {s['fused_rank']} ({s['document']})" for s in skipped) if skipped else ""))
        if explain and e and (year := e.get("year_match")):
            lines.append(f"     year match: question {', '.join(year['question'])} | document "
                         f"{', '.join(year['document']) or '—'} | matched {', '.join(year['matched']) or '—'} "
                         f"→ +{year['added']:.6f}")
    if explain and not any(r.node.metadata.get("explanation") for r in results):
        lines.append("(no explanation: only fusion and hybrid results carry one)")  # said once, not per result
    return "\n".join(lines)


def search_header(mode: str, dataset: str | None, query: str, n_results: int, seconds: float) -> str:
    """One line above the results: what was searched, how, and how long it took."""
    where = f" in {dataset}" if dataset else ""
    return f"{mode} search{where}: {query!r} — {n_results} result(s) in {seconds * 1000:.0f} ms"


def _number(value, spec: str) -> str:
    """A table cell: the number, or "n/a" where there is none (a metric not computed, or NaN)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if math.isnan(value) else format(value, spec)


def render_ir_table(results: dict[str, dict[str, float]], title: str = "", anchors: dict[str, str] | None = None) -> str:
    columns = ["ndcg@10", "recall@100", "mrr@10", "chunk_hit@5", "judged@10", "p50_ms"]
    lines = [title] if title else []
    width = max([10, *(len(m) + 2 for m in results)])
    header = f"{'mode':<{width}}" + "".join(f"{c:>12}" for c in columns) + ("  published" if anchors else "")
    lines += [header, "-" * len(header)]
    for mode, row in results.items():
        cells = "".join(f"{_number(row.get(c), '.1f' if c == 'p50_ms' else '.4f'):>12}" for c in columns)
        lines.append(f"{mode:<{width}}{cells}" + (f"  {anchors.get(mode, '')}" if anchors else ""))
    return "\n".join(lines)


def render_context_report(manifest, up_to_date: bool) -> str:
    """What a contextual build put on the chunks, and what the LLM part cost."""
    report = manifest.contextual_report or {}
    lines = [f"contextual variant: {manifest.contextual}"]
    if up_to_date:
        lines.append("  index up to date: no context computed, no LLM call (contexts as of the last build below)")
    if manifest.contextual in ("annotations", "both"):
        missing = report.get("unannotated_documents") or []
        lines.append(f"  annotations: {report.get('annotated', 0)}/{report.get('chunks', 0)} chunks annotated"
                     + (f"; no pattern matches {len(missing)} document(s): {', '.join(missing[:5])}" if missing else ""))
    llm = report.get("llm")
    if llm:
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(llm["reasons"].items(), key=lambda kv: -kv[1])) or "none"
        lines.append(f"  LLM contexts: {llm['contextualised']} contextualised, {llm['uncontextualised']} "
                     f"uncontextualised (rejected twice; indexed without an LLM context)")
        lines.append(f"  {llm['from_cache']}/{llm['chunks']} served from the cache; {llm['calls']} LLM call(s) "
                     f"({llm['retries']} retries), {llm['prompt_tokens']} prompt + {llm['completion_tokens']} "
                     f"completion tokens, {llm['seconds']:.1f}s; rejected answers: {reasons}")
    return "\n".join(lines)
