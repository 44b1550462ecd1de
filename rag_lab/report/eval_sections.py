"""Report sections of an evaluation run (``rag-lab eval``): per-mode metrics with CIs and significance,
latency and cost, failures. The ablation and IR sections are in :mod:`rag_lab.report.sections`."""

from __future__ import annotations

import html
from pathlib import Path

from rag_lab.report import figures as F
from rag_lab.report import tables as T
from rag_lab.report.manifest_table import kv_table
from rag_lab.report.sections import figure_html, section, table_html


def generic_sections(run_dir: Path, manifest: dict) -> list:
    """An evaluation run (``rag-lab eval``): per-mode metrics with CIs and significance, latency and
    cost, the worst questions with answers and cited sources. Any other run: its manifest."""
    sections = [section("Run manifest", kv_table(manifest))]
    try:
        from rag_lab.evaluate.store.frames import load_run
    except ImportError:
        return sections
    from rag_lab.errors import RagLabError

    try:
        run = load_run(run_dir)
    except RagLabError:
        raise  # a damaged run file: `rag-lab report` fails naming it, never a report with a section missing
    try:
        notes = "".join(f"<p class=\"bad\">{html.escape(note)}</p>" for note in run.notes)
        return sections + ([section("Damaged files", notes)] if notes else []) + _eval_sections(run)
    except Exception as exc:  # shown in the report, never silently dropped
        return sections + [section("Evaluation tables", f"<p class=\"bad\">could not render the evaluation frames: "
                                                         f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</p>")]


def _eval_sections(run) -> list:
    import pandas as pd

    sections = []
    scored = run.samples.dropna(subset=["value"])
    failed = run.summary[run.summary["nan"] > 0]
    if scored.empty and failed.empty:
        return sections
    body = ""
    if len(scored):
        ci, table, significance, baseline = _eval_mode_table(run, scored)
        from rag_lab.evaluate.store.frames import split_label

        body += (f"<p>Questions: {html.escape(split_label(run.manifest))}. "
                 "Means with seeded 95 % bootstrap intervals over the scored samples; ▲/▼ = significant "
                 f"against {html.escape(baseline)} by both paired tests (Student's t and Fisher's randomization) "
                 "after Holm correction. <b>failed</b>: samples whose metric failed or came back NaN, left out "
                 "of the mean (not counted as 0).</p>" + table_html(table))
        if len(significance):
            body += "<h3>Against " + html.escape(baseline) + "</h3>" + table_html(significance)
        body += figure_html(F.mode_metric_bars(ci), "each metric per mode: mean over the scored samples, "
                                                    "95 % bootstrap CI")
    if len(failed):
        body += "<h3>Failed metrics</h3>" + _failure_note(run, failed)
    sections.append(section("Per-mode tables", body))
    sections.append(section("Latency and cost", _eval_latency(run.modes)))
    if scored.empty:
        return sections
    main_metric = next((m for m in ("key_fact_recall", "id_context_recall", "rouge_l") if m in set(scored["metric"])),
                       scored["metric"].iloc[0])
    body = f"<p>The lowest-scoring questions per mode by {html.escape(main_metric)}.</p>"
    for mode, records in run.records.items():
        by_id = {str(r.get("id")): r for r in records}
        of_mode = scored[scored["mode"] == mode]
        # the worst question's other key-fact score beside the one it was ranked by
        companion = {"key_fact_recall": "key_fact_precision"}.get(main_metric)
        companion_values = dict(zip(of_mode.loc[of_mode["metric"] == companion, "sample_id"].astype(str),
                                    of_mode.loc[of_mode["metric"] == companion, "value"]))
        worst = of_mode[of_mode["metric"] == main_metric].sort_values("value").head(3)
        for _, w in worst.iterrows():
            rec = by_id.get(str(w["sample_id"]), {})
            other = companion_values.get(str(w["sample_id"]))
            other_text = (f" · {html.escape(companion)} = {'—' if other is None or pd.isna(other) else f'{other:.3f}'}"
                          if companion else "")
            cited = rec.get("cited_sources") or []
            cited_text = ", ".join(str(c.get("doc", c)) if isinstance(c, dict) else str(c) for c in cited)
            body += (f"<div class=\"answer\"><b>{html.escape(mode)}</b> · {html.escape(str(w['sample_id']))} · "
                     f"{html.escape(main_metric)} = {w['value']:.3f}{other_text}<br><b>Q:</b> {html.escape(str(rec.get('question', '')))}"
                     f"<br><b>answer:</b> {html.escape(str(rec.get('answer', ''))[:1200])}"
                     f"<br><b>cited sources:</b> {html.escape(cited_text or '(none cited)')}</div>")
    sections.append(section("Worst questions", body))
    return sections


def _eval_mode_table(run, scored):
    """(CI frame, metric × mode table, significance table, baseline), from the mode comparison's own
    statistics (:mod:`rag_lab.report.comparison`). A cell: ``mean [CI]`` and its mark; beside each
    mode, how many samples failed that metric (left out of the mean)."""
    import pandas as pd

    from rag_lab.evaluate.store.frames import metric_order
    from rag_lab.report.comparison import mode_table, per_query_from_samples, significance_table

    per_query = per_query_from_samples(scored)
    modes = list(run.records) or list(per_query)
    baseline = next((m for m in modes if m in per_query), next(iter(per_query)))
    ci = mode_table(per_query, baseline)
    failed = {(r["mode"], r["metric"]): int(r["nan"]) for _, r in run.summary.iterrows()}
    arrow = {True: "▲", False: "▼"}
    cells = {(r["mode"], r["metric"]): (T.fmt_ci(r["mean"], r["ci_low"], r["ci_high"])
                                        + (f" {arrow[r['delta'] > 0]}" if r["significant"] else ""))
             for _, r in ci.iterrows()}
    rows = []
    for metric in metric_order(list(dict.fromkeys(run.summary["metric"]))):
        row = {"metric": metric}
        for mode in modes:
            row[mode] = cells.get((mode, metric), "—")
            row[f"{mode} failed"] = failed.get((mode, metric), 0)
        rows.append(row)
    significance = significance_table(ci) if len(per_query) > 1 else pd.DataFrame()
    return ci, pd.DataFrame(rows), significance, baseline


def _failure_note(run, failed) -> str:
    """Per mode × metric: how many samples failed and the most common reason recorded."""
    import pandas as pd
    from collections import Counter

    rows = []
    for _, r in failed.iterrows():
        reasons = Counter(str((rec.get("score_errors") or {}).get(r["metric"], "NaN score")).split("\n")[0]
                          for rec in run.records.get(r["mode"], [])
                          if r["metric"] in (rec.get("scores") or {}) and _failed(rec["scores"][r["metric"]]))
        reason, count = reasons.most_common(1)[0] if reasons else ("NaN score", int(r["nan"]))
        rows.append({"mode": r["mode"], "metric": r["metric"], "failed": f"{int(r['nan'])} of {int(r['applicable'])}",
                     "most common reason": (reason[:240] + "…" if len(reason) > 240 else reason)
                     + (f" ({count}×)" if len(reasons) > 1 else "")})
    return ("<p class=\"note\">These metrics failed on some samples (a judge that errored, timed out or "
            "replied unusably). Failed samples are left out of the means above, not counted as 0.</p>"
            + table_html(pd.DataFrame(rows)))


def _failed(value) -> bool:
    try:
        return value is None or value != value or float(value) in (float("inf"), float("-inf"))
    except (TypeError, ValueError):
        return True


_LATENCY_COLUMNS = {"mode": "mode", "samples": "samples", "errors": "errors", "cached": "cached answers",
                    "latency_p50_s": "total p50 (s)", "latency_p95_s": "total p95 (s)", "retrieve_s": "retrieve (s)",
                    "generate_s": "generate (s)", "score_s": "score (s)"}
_COST_COLUMNS = {"mode": "mode", "prompt_tokens": "prompt tokens", "completion_tokens": "completion tokens",
                 "total_tokens": "total tokens", "cost_usd": "cost (USD)", "cites_nothing": "answers citing nothing"}


def _eval_latency(modes) -> str:
    """The per-mode run frame as two tables a page can hold: time per sample, then tokens and cost."""
    latency = modes[[c for c in _LATENCY_COLUMNS if c in modes.columns]].rename(columns=_LATENCY_COLUMNS)
    cost = modes[[c for c in _COST_COLUMNS if c in modes.columns]].copy()
    if "cites_nothing" in cost.columns:
        cost["cites_nothing"] = [("—" if v != v else f"{v:.0%}") for v in cost["cites_nothing"]]
    if "cost_usd" in cost.columns:
        cost["cost_usd"] = [("—" if v != v else f"${v:.4f}") for v in cost["cost_usd"]]
    cost = cost.rename(columns=_COST_COLUMNS)
    return ("<p>Seconds per sample (mean per stage; p50/p95 of the whole sample).</p>" + table_html(latency)
            + "<h3>Tokens and cost</h3>" + table_html(cost))
