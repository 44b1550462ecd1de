"""Report sections of an evaluation run (``rag-lab eval``), results first: the verdict, per-mode
metrics (each defined, with its cut-off) with CIs, significance and failures, the figure, the worst
questions, latency and cost; the manifest last, folded. The ablation and IR sections are in
:mod:`rag_lab.report.sections`."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_lab.evaluate.statistics import policy
from rag_lab.report import figures as F
from rag_lab.report.comparison import MIN_INTERVAL_N
from rag_lab.report import tables as T
from rag_lab.report.manifest_table import kv_table
from rag_lab.report.sections import figure_html, section, table_html, verdict_section


def generic_sections(run_dir: Path, manifest: dict) -> list:
    """An evaluation run (``rag-lab eval``), results first: the verdict, per-mode metrics with their
    definitions, CIs and significance, the figure, the worst questions, latency and cost; the
    manifest last, folded. Any other run: its manifest."""
    settings = settings_section(manifest)
    try:
        from rag_lab.evaluate.store.frames import load_run
    except ImportError:
        return [settings]
    from rag_lab.errors import RagLabError

    try:
        run = load_run(run_dir)
    except RagLabError:
        raise  # a damaged run file: `rag-lab report` fails naming it, never a report with a section missing
    try:
        notes = "".join(f"<p class=\"bad\">{html.escape(note)}</p>" for note in run.notes)
        return _eval_sections(run, [section("Damaged files", notes)] if notes else []) + [settings]
    except Exception as exc:  # shown in the report, never silently dropped
        return [section("Evaluation tables", f"<p class=\"bad\">could not render the evaluation frames: "
                                             f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</p>"), settings]


def settings_section(manifest: dict):
    """The run's manifest and settings, folded: what a reader opens to reproduce a run, not to read it."""
    return section("Run manifest", kv_table(manifest), folded=f"manifest and settings ({', '.join(map(str, manifest))})")


def _eval_sections(run, warnings: list) -> list:
    scored = run.samples.dropna(subset=["value"])
    failed = run.summary[run.summary["nan"] > 0]
    if scored.empty and failed.empty:
        return warnings
    comparison = _comparison(run, scored)
    sections = [verdict_section(run_verdict(run)) if comparison else
                section("Verdict", "<p class=\"verdict\">nothing could be scored: every metric failed "
                                   "(see “Failed metrics” below)</p>")]
    from rag_lab.report.calibration_section import calibration_sections

    judged_verdicts, judged = calibration_sections(run)  # judged metrics: calibrated by labels, or not
    sections[0].body += judged_verdicts
    sections += warnings + judged
    from rag_lab.evaluate.store.frames import split_label

    baseline = comparison.baseline if comparison else "the first mode"
    body = (f"<p>Questions: {html.escape(split_label(run.manifest))}. "
            "Means with seeded 95 % bootstrap intervals over the scored samples (none below "
            f"{MIN_INTERVAL_N} samples: a bootstrap of a handful of values reflects n, not the mean's uncertainty); "
            "▲/▼ = significant "
            f"against {html.escape(baseline)} by the lab's paired test ({html.escape(policy.TEST_NAME)}), "
            f"{policy.CORRECTION}-corrected over every mode × metric. <b>failed</b>: samples whose metric failed or came back NaN, out of those "
            "it applies to, left out of the mean (not counted as 0); <b>n/a</b>: no sample could be scored.</p>"
            + table_html(_eval_mode_table(run, comparison), html_columns=("metric",)))
    if comparison is not None and len(comparison.significance):
        verdict = comparison.verdict
        body += ("<h3>Against " + html.escape(baseline) + "</h3>"
                 + ("" if verdict.powered else f"<p>With n = {verdict.n} no p-value below can go under "
                    f"{verdict.floor:.3g} (see the verdict): none can be significant.</p>")
                 + table_html(comparison.significance))
    if len(failed):
        body += "<h3>Failed metrics</h3>" + _failure_note(run, failed)
    sections.append(section("Per-mode tables", body))
    if comparison is not None:
        sections.append(section("Figures", figure_html(F.mode_metric_bars(comparison.table),
                                                       "each metric per mode: mean over the scored samples, "
                                                       "95 % bootstrap CI")))
    if not scored.empty:
        sections.append(_worst_section(run, scored))
    sections.append(section("Latency and cost", _eval_latency(run.modes)))
    return sections


def run_verdict(run):
    """The verdict of an evaluation run (:class:`rag_lab.report.verdict.Verdict`), None when nothing was scored."""
    comparison = _comparison(run, run.samples.dropna(subset=["value"]))
    if comparison is None:
        return None
    from rag_lab.report.verdict import with_questions

    return with_questions(comparison.verdict, run.manifest)


@dataclass(frozen=True)
class _Comparison:
    """The mode comparison of a run's scored samples: its table, significance rows and verdict."""

    per_query: dict
    table: Any
    significance: Any
    baseline: str
    verdict: Any


def _comparison(run, scored) -> _Comparison | None:
    """Per-mode CIs, paired tests against the baseline (the run's first mode) and the verdict, from
    the mode comparison's own statistics (:mod:`rag_lab.report.comparison`); None when nothing was scored."""
    import pandas as pd

    from rag_lab.report.comparison import mode_table, per_query_from_samples, significance_table
    from rag_lab.report.verdict import build_verdict

    if scored.empty:
        return None
    per_query = per_query_from_samples(scored)
    modes = list(run.records) or list(per_query)
    baseline = next((m for m in modes if m in per_query), next(iter(per_query)))
    table = mode_table(per_query, baseline)
    significance = significance_table(table) if len(per_query) > 1 else pd.DataFrame()
    return _Comparison(per_query, table, significance, baseline, build_verdict(per_query, table))


def _eval_mode_table(run, comparison):
    """Metrics as rows — each with what it measures and its cut-off — modes as columns: ``mean [CI]``
    and its mark; beside each mode, how many of the samples the metric applies to failed."""
    import pandas as pd

    from rag_lab.evaluate.store.frames import metric_order
    from rag_lab.report.metric_notes import cutoff, definition

    modes = list(run.records) or list(dict.fromkeys(run.summary["mode"]))
    counts = {(r["mode"], r["metric"]): (int(r["nan"]), int(r["applicable"])) for _, r in run.summary.iterrows()}
    arrow = {True: "▲", False: "▼"}
    cells = {}
    if comparison is not None:
        cells = {(r["mode"], r["metric"]): (T.fmt_ci(r["mean"], r["ci_low"], r["ci_high"])
                                            + (f" {arrow[r['delta'] > 0]}" if r["significant"] else ""))
                 for _, r in comparison.table.iterrows()}
    top_n = _top_n(run.manifest)
    rows = []
    for metric in metric_order(list(dict.fromkeys(run.summary["metric"]))):
        text = definition(metric)
        row = {"metric": (f"<b>{html.escape(metric)}</b>"
                          + (f'<br><span class="def">{html.escape(text)}</span>' if text else "")),
               "cut-off": cutoff(metric, top_n)}
        for mode in modes:
            nan, applicable = counts.get((mode, metric), (0, 0))
            row[mode] = cells.get((mode, metric)) or _not_scored(run, mode, metric, nan, applicable)
            row[f"{mode} failed"] = f"{nan}/{applicable}" if applicable else "n/a"
        rows.append(row)
    return pd.DataFrame(rows)


def _not_scored(run, mode: str, metric: str, nan: int, applicable: int) -> str:
    """The cell of a metric with no score in a mode: n/a and why."""
    if not applicable:
        return "n/a (applies to no question)"
    reasons = failure_reasons(run, mode, metric)
    reason = reasons.most_common(1)[0][0] if reasons else "NaN score"
    return f"n/a (all {applicable} failed: {_short(reason, 80)})"


def _top_n(manifest: dict) -> int:
    """The chunks the LLM read per question: the run's --top-n, else the answerer's default."""
    from rag_lab.answer.rerank import DEFAULT_TOP_N

    params = (manifest.get("config") or {}).get("params") or {}
    try:
        return int(params.get("top_n") or DEFAULT_TOP_N)
    except (TypeError, ValueError):
        return DEFAULT_TOP_N


def _short(text: str, limit: int) -> str:
    import textwrap

    return text if len(text) <= limit else textwrap.shorten(text, width=limit, placeholder="…")


def _worst_section(run, scored):
    """The lowest-scoring questions per mode by the main answer metric, each answer whole (or cut at a
    word with "…") and its cited sources named once."""
    import pandas as pd

    from rag_lab.answer.statements import is_non_answer
    from rag_lab.report.answer_text import cited_line, cut_note, readable_answer

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
            other_text = (f" · {html.escape(companion)} = "
                          + (f"{other:.3f}" if other is not None and not pd.isna(other) else
                             "n/a (failed)" if companion in (rec.get("scores") or {}) else "n/a (not applicable)")
                          if companion else "")
            answer = str(rec.get("answer") or "")
            if is_non_answer(answer):
                other_text += " · <b>non-answer</b> (quotes only, no statement of its own)"
            body += (f"<div class=\"answer\"><b>{html.escape(mode)}</b> · {html.escape(str(w['sample_id']))} · "
                     f"{html.escape(main_metric)} = {w['value']:.3f}{other_text}<br><b>Q:</b> {html.escape(str(rec.get('question', '')))}"
                     + (f"<br><b>reference:</b> {html.escape(readable_answer(rec['reference']))}" if rec.get("reference") else "")
                     + f"<br><b>answer:</b> {html.escape(readable_answer(answer))}{_note(cut_note(answer))}"
                     f"<br><b>cited sources:</b> {html.escape(cited_line(answer, rec.get('cited_sources')))}</div>")
    return section("Worst questions", body)


def _note(text: str) -> str:
    return f' <span class="def">({html.escape(text)})</span>' if text else ""


def failure_reasons(run, mode: str, metric: str):
    """How often each first line of the recorded error explains a failed ``metric`` in ``mode``."""
    from collections import Counter

    return Counter(str((rec.get("score_errors") or {}).get(metric, "NaN score")).split("\n")[0]
                   for rec in run.records.get(mode, [])
                   if metric in (rec.get("scores") or {}) and _failed(rec["scores"][metric]))


def _failure_note(run, failed) -> str:
    """Per mode × metric: how many samples failed and the most common reason recorded."""
    import pandas as pd

    rows = []
    for _, r in failed.iterrows():
        reasons = failure_reasons(run, r["mode"], r["metric"])
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
                 "total_tokens": "total tokens", "cost_usd": "cost (USD)", "cites_nothing": "answers citing nothing",
                 "non_answers": "non-answers (quotes only)",
                 "citations_unverifiable": "citations not checkable (n/a: their sentence states no key fact)"}


def missing_figure(column: str, answered: bool) -> str:
    """A per-mode run figure that is NaN, and why: no answer in this mode, or (cost) a model with no list price."""
    if not answered:
        return "n/a (no answer)"
    return "n/a (no price)" if column == "cost_usd" else "n/a"


def _eval_latency(modes) -> str:
    """The per-mode run frame as two tables a page can hold: time per sample, then tokens and cost;
    a figure that is NaN reads n/a and why."""
    answered = (modes["samples"] > modes["errors"]).tolist()

    def shown(column, fmt=None):
        return [missing_figure(column, ok) if v != v else (fmt.format(v) if fmt else v)
                for v, ok in zip(modes[column], answered)]

    latency = modes[[c for c in _LATENCY_COLUMNS if c in modes.columns]].astype(object)
    for column in latency.columns.drop("mode"):
        latency[column] = shown(column)
    cost = modes[[c for c in _COST_COLUMNS if c in modes.columns]].astype(object)
    for column, fmt in (("cites_nothing", "{:.0%}"), ("non_answers", "{:.0%}"), ("cost_usd", "${:.4f}")):
        if column in cost.columns:
            cost[column] = shown(column, fmt)
    latency, cost = latency.rename(columns=_LATENCY_COLUMNS), cost.rename(columns=_COST_COLUMNS)
    return ("<p>Seconds per sample (mean per stage; p50/p95 of the whole sample).</p>" + table_html(latency)
            + "<h3>Tokens and cost</h3>" + table_html(cost))
