"""Report sections built from a run's tidy frames (tables, inline figures, notes)."""

from __future__ import annotations

import html

from rag_lab.report import figures as F
from rag_lab.report import tables as T
from rag_lab.report.answer_text import readable_answer
from rag_lab.report.manifest_table import kv_table, manifest_section, spot_check_section
from rag_lab.report.page import Section


def section(title: str, body: str, folded: str = "") -> Section:
    return Section(title, body, folded)


def table_html(frame, caption: str | None = None, max_rows: int = 200, html_columns: tuple[str, ...] = ()) -> str:
    """A DataFrame as an escaped HTML table; numbers right-aligned, significance marks coloured.
    ``html_columns``: columns whose cells are already HTML (not escaped again)."""
    if frame is None or len(frame) == 0:
        return "<p><em>(no rows)</em></p>"
    frame = frame.head(max_rows)
    # Long snake_case names may break after "_" (else one header can push a table off the page).
    head = "".join(f"<th>{html.escape(str(c)).replace('_', '_<wbr>')}</th>" for c in frame.columns)
    body = []
    for _, row in frame.iterrows():
        cells = []
        for column, value in zip(frame.columns, row.tolist()):
            text = value if isinstance(value, str) else ("—" if value is None or value != value else
                                                         f"{value:.3f}" if isinstance(value, float) else str(value))
            cls = (' class="sig-up"' if text.startswith("▲") or text.endswith("▲") else ' class="sig-down"'
                   if text.startswith("▼") or text.endswith("▼") else ' class="num"' if not isinstance(value, str) else "")
            cells.append(f"<td{cls}>{text if column in html_columns else html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def figure_html(fig, caption: str) -> str:
    return f"<figure>{F.to_svg(fig)}<figcaption>{html.escape(caption)}</figcaption></figure>"


def verdict_section(verdict) -> Section:
    """The report's opening: the verdict line, whether the tests could tell, and per metric which
    mode scored highest and what the paired tests say about it (:mod:`rag_lab.report.verdict`)."""
    import pandas as pd

    body = f'<p class="verdict">{html.escape(verdict.headline())}</p>'
    if len(verdict.modes) < 2:
        return section("Verdict", body)
    body += f"<p>{html.escape(verdict.power_text())}</p>"
    base = verdict.baseline
    rows = [{"metric": v.metric, "highest mean": v.highest(),
             f"{base} (baseline)": "n/a" if v.baseline_mean != v.baseline_mean else f"{v.baseline_mean:.3f}",
             f"against {base}": (v.text(base) if verdict.powered else
                                 f"cannot tell at n = {verdict.n}" + ("" if v.best == base or v.tie
                                                                      else f" ({v.best} Δ {v.best_delta:+.3f})"))}
            for v in verdict.metrics]
    body += table_html(pd.DataFrame(rows))
    if verdict.powered:
        from rag_lab.evaluate.statistics import policy

        body += (f"<p>p: the comparison policy's Holm-adjusted p ({html.escape(policy.TEST_TEXT)}); a difference "
                 f"is called significant when it is below α = {verdict.alpha:g}.</p>")
    return section("Verdict", body)


def ablation_sections(result) -> list:
    from rag_lab.evaluate.ablation.spot_check import live_marks, unconfirmed_values, with_live_marks

    results, manifest = T.one_recall(result.results), result.manifest
    metrics = list(dict.fromkeys(results["metric"]))
    main_metric = T.main_metric(results)
    sections = [ablation_verdict_section(results, manifest, main_metric)]

    # Per-mode tables at the default k / prefetch.
    body = ("<p>Each mode at the default RRF k and prefetch with equal weights, every top-k. Means with "
            "95 % bootstrap intervals (seeded); ▲/▼ = significantly better/worse than its baseline: "
            + html.escape(_significance_text(manifest)) + "</p>")
    base = T.baseline_rows(results)
    for mode, group in base.groupby("mode", sort=False):
        body += f"<h3>{html.escape(mode)}</h3>" + table_html(T.wide(group))
        if any(live_marks(group, manifest.get("spot_check"))):
            body += '<p class="bad">† These rows hold a value the live spot check could not confirm (see the spot check).</p>'
    sections.append(section("Per-mode tables", body))

    body = f"<p>Best configuration per mode and top-k by {html.escape(F.metric_label(main_metric))}.</p>"
    check = manifest.get("spot_check")
    best = T.best_rows(results, main_metric)
    body += table_html(with_live_marks(T.display(best), best, check))
    significant = T.significant_rows(results)
    body += "<h3>Significant differences from the baseline</h3>"
    families = (manifest.get("significance") or {}).get("families") or {}
    body += "<p>" + html.escape(_significance_text(manifest)) + "</p>"
    if families:
        body += ("<p>Families of the exploratory per-family Holm view (one per mode × top-k × metric of each; "
                 "its p-values are shown for orientation and never called significant):</p><ul>") + "".join(
            f"<li><b>{html.escape(axis)}</b>: {info['families']} families of "
            f"{'/'.join(str(v) for v in info['comparisons_per_family'])} comparisons — {html.escape(info['question'])}; "
            f"{info['significant']} significant"
            + (f", {info['exploratory_below_alpha']} below α in the exploratory view" if "exploratory_below_alpha" in info
               else "") + "</li>" for axis, info in families.items()) + "</ul>"
    from rag_lab.evaluate.ablation.significance import tested_cut_off, uncontrolled_rows

    body += (table_html(with_live_marks(T.display(significant), significant, check)) if len(significant)
             else f"<p>No configuration of the marked set ({html.escape(tested_cut_off(results))}, one setting moved) "
                  "differs significantly from its baseline.</p>")
    elsewhere = uncontrolled_rows(results)
    if len(elsewhere):
        body += ("<p><b>Not controlled — confirm with <code>tune</code></b>: rows outside the marked set (another "
                 "top-k, or several settings moved) whose exploratory per-family Holm p is below 0.05. The marks' "
                 "error rate does not cover them.</p>"
                 + table_html(with_live_marks(T.display(elsewhere), elsewhere, check)))
    sections.append(section("Best configurations and significance", body))

    body = ""
    for metric in [m for m in (main_metric, "recall@top_k") if m in metrics]:
        body += figure_html(F.fusion_k_lines(results, metric), f"{F.metric_label(metric)} vs RRF k, 95 % CI bands")
    for mode in dict.fromkeys(results["mode"]):
        unconfirmed = unconfirmed_values(check).get(mode, {})
        body += figure_html(F.prefetch_topk_heatmap(results, mode, main_metric, unconfirmed=unconfirmed),
                            f"{mode}: {F.metric_label(main_metric)} over prefetch × top-k"
                            + ("; † = not confirmed by the live spot check" if unconfirmed else ""))
    sections.append(section("Ablation plots", body))
    answers = getattr(result, "answers", None)
    if answers is not None and len(answers):
        sections.append(answers_section(answers))
    sections.append(worst_section(result, main_metric))
    sections.append(latency_section(manifest, answers))
    sections += [s for s in (spot_check_section(manifest), manifest_section(manifest)) if s is not None]
    return sections


def ablation_verdict_section(results, manifest: dict, metric: str) -> Section:
    """An ablation's opening: the best configuration by the headline metric at the largest top-k, and
    how many one-setting changes the marked set calls significantly better or worse than their
    baseline — or, when the questions are too few for any mark, that it cannot tell."""
    from rag_lab.report.verdict import smallest_adjusted_p, smallest_p

    sig = manifest.get("significance") or {}
    alpha = float(sig.get("alpha", T.ALPHA))
    n = int(manifest.get("n_queries") or 0)
    tested = int(sig.get("marked_set_size") or 0)
    from rag_lab.evaluate.statistics import policy

    family = int((sig.get("command_family") or {}).get("size") or tested)  # --contextual: the command's one family
    floor = smallest_adjusted_p(n, family, n_permutations=policy.FLIPS)  # the policy's randomization floor
    rows = results[results["metric"] == metric]
    top = rows[rows["top_k"] == rows["top_k"].max()] if len(rows) else rows
    if len(top):
        best = top.loc[top["mean"].idxmax()]
        best_text = (f"best by {F.metric_label(metric)} at top-{int(best['top_k'])}: {best['mode']} k={best['k']} "
                     f"prefetch={best['prefetch']} weights {best['dense_weight']:g}:{best['sparse_weight']:g} "
                     f"({T.fmt_ci(best['mean'], best['ci_low'], best['ci_high'])})")
    else:
        best_text = "no scores"
    if tested and floor >= alpha:
        headline = f"too few questions to tell (n = {n})"
        power = (f"With n = {n} paired questions no paired test can give a two-sided p below {smallest_p(n, policy.FLIPS):.3g}, and "
                 f"after Holm's correction over the {family} marked comparisons the smallest possible p is {floor:.3g}: "
                 f"never below α = {alpha:g}. Nothing below can be called significant; {best_text} describes these "
                 "questions only.")
    else:
        marked = results[results["marked_set"].fillna(False).astype(bool)] if "marked_set" in results else results.iloc[:0]
        significant = marked[marked["significant"].fillna(False).astype(bool)]
        better, worse = int((significant["delta"] > 0).sum()), int((significant["delta"] < 0).sum())
        headline = (f"{best_text}; of {tested} one-setting changes tested, {better} significantly better and "
                    f"{worse} significantly worse than their baseline — n = {n} questions")
        power = (f"With n = {n} paired questions the tests can tell: the smallest p they can give after Holm's "
                 f"correction over the {family} marked comparisons is {floor:.2g}, below α = {alpha:g}." if tested
                 else "No comparison can be marked in this grid.")
    from rag_lab.report.verdict import questions_label

    if label := questions_label(manifest):
        headline += f" — questions: {label}"
    return section("Verdict", f'<p class="verdict">{html.escape(headline)}</p><p>{html.escape(power)}</p>')


def _significance_text(manifest: dict) -> str:
    sig = manifest.get("significance") or {}
    if "command_family" in sig:
        return (f"{sig['command_family']['text']}; this grid holds {sig.get('marked_set_size', 0)} of them "
                f"(exploratory beside it: {sig.get('exploratory_tests', '')}).")
    if "exploratory_tests" in sig:
        return f"{sig['significant']} (exploratory beside it: {sig['exploratory_tests']})."
    if "error_rate" in sig:
        return (f"{sig['significant']} (decision test: {sig['decision_test']}; {sig.get('check_test', '')} "
                "reported beside it).")
    if "decision_test" in sig:
        return (f"{sig['decision_test']}, Holm-corrected within each family (the comparisons answering one "
                f"question, e.g. “does k matter?”, for one mode, top-k and metric; the family is named in each "
                f"row), α = {sig.get('alpha', 0.05)}; {sig.get('check_test', '')} reported beside it.")
    return "both Student's t and Fisher's randomization test after Holm correction over the whole grid (older run)."


def answers_section(answers):
    """Answer-level metrics per answer configuration (key-fact recall with a bootstrap CI)."""
    import pandas as pd

    from rag_lab.evaluate.statistics.significance import bootstrap_ci
    from rag_lab.report import comparison as C

    def numeric(group, column):
        # older runs (before key_fact_precision existed) have no such column: an empty CI, shown "—"
        values = group[column] if column in group else pd.Series(dtype=float)
        ci = bootstrap_ci(pd.to_numeric(values, errors="coerce").to_numpy())
        return ci if ci["n"] >= C.MIN_INTERVAL_N else {**ci, "ci_low": float("nan"), "ci_high": float("nan")}

    rows = []
    for config, group in answers.groupby("config", sort=False):
        kf = numeric(group, "key_fact_recall")
        kp = numeric(group, "key_fact_precision")
        rows.append({"config": config, "answers": len(group),
                     "key-fact recall [95% CI]": T.fmt_ci(kf["mean"], kf["ci_low"], kf["ci_high"]),
                     "key-fact precision [95% CI]": T.fmt_ci(kp["mean"], kp["ci_low"], kp["ci_high"]),
                     "no reference facts": kf["n_nan"],
                     "cites a relevant file": f"{group['cites_relevant'].astype(bool).mean():.0%}",
                     "cites nothing": f"{(group['cited'].apply(len) == 0).mean():.0%}"})
    body = ("<p>Answers generated from each configuration's fused chunks (one generation per distinct context; "
            "configurations that give the generator the same chunks share it). Key-fact recall: the share of the "
            "reference answer's new numbers, amounts and codes (those the question does not state) the answer states; "
            "key-fact precision: the share of the answer's own such facts that the reference states (a dump of "
            "every number in the context scores high recall, low precision).</p>")
    body += table_html(pd.DataFrame(rows))
    body += "<h3>Weakest answers (lowest key-fact recall), with their cited sources</h3>"
    scored = answers.assign(_kf=pd.to_numeric(answers["key_fact_recall"], errors="coerce").fillna(-1.0))
    for _, row in scored.sort_values(["_kf", "qid"]).head(8).iterrows():
        kf = "—" if row["_kf"] < 0 else f"{row['_kf']:.2f}"
        precision = pd.to_numeric(row.get("key_fact_precision"), errors="coerce")
        kp = "—" if pd.isna(precision) else f"{precision:.2f}"
        body += (f"<div class=\"answer\"><b>{html.escape(str(row['config']))}</b> · question {html.escape(str(row['qid']))}"
                 f" · key-fact recall {kf} · precision {kp}<br><b>Q:</b> {html.escape(str(row['question']))}"
                 f"<br><b>answer:</b> {html.escape(readable_answer(row['answer']))}"
                 f"<br><b>cited sources:</b> {html.escape(', '.join(row['cited']) or '(none cited)')}"
                 f"<br><b>retrieved:</b> {html.escape(', '.join(dict.fromkeys(row['retrieved'])))}</div>")
    return section("Answer-level metrics", body)


def latency_section(manifest: dict, answers=None):
    import pandas as pd

    legs = manifest.get("leg_latency") or {}
    frame = pd.DataFrame([{"label": leg, "p50_ms": v["p50_ms"], "p95_ms": v["p95_ms"], "n": v["n"]}
                          for leg, v in legs.items()])
    body = ("<p>Retrieval time per question of each leg (done once per question at the largest prefetch; every "
            "configuration is then computed from the cached lists):</p>")
    body += table_html(frame)
    if len(frame):
        body += figure_html(F.latency_bars(frame), "leg retrieval latency per question (p50, p95)")
    timing = manifest.get("timing") or {}
    if timing:
        body += "<h3>Run time by stage</h3>" + kv_table({k: f"{v:.2f} s" for k, v in timing.items()})
    if answers is not None and len(answers):
        body += "<h3>Answer generation</h3>" + table_html(answer_cost_table(answers))
    else:
        body += ("<p>Retrieval only: no tokens and no provider cost (the ablation calls no LLM unless "
                 "answer configurations are evaluated).</p>")
    return section("Latency and cost", body)


def answer_cost_table(answers):
    frame = answers.copy()
    agg = {"latency_s": ("latency_s", "median"), "answers": ("qid", "count")}
    for col in ("prompt_tokens", "completion_tokens", "cost_usd"):
        if col in frame.columns:
            agg[col] = (col, "sum")
    return frame.groupby("config").agg(**agg).reset_index()


def worst_section(result, metric: str):
    body = ""
    worst = worst_questions(result, metric)
    if worst is None or not len(worst):
        return section("Worst questions", "<p>(no per-question scores)</p>")
    body += (f"<p>The lowest-scoring questions by {html.escape(F.metric_label(metric))} at each mode's baseline "
             "configuration (largest top-k), with what was retrieved"
             + (" and the answer with its cited sources" if "answer" in worst.columns else "") + ".</p>")
    for _, row in worst.iterrows():
        body += (f"<div class=\"answer\"><b>{html.escape(str(row['mode']))}</b> · question "
                 f"{html.escape(str(row['qid']))} · {html.escape(metric)} = {row['score']:.3f}<br>"
                 f"<b>Q:</b> {html.escape(str(row.get('question', '')))}<br>"
                 f"<b>relevant:</b> {html.escape(', '.join(row.get('relevant') or []))}<br>"
                 f"<b>retrieved:</b> {html.escape(', '.join(row.get('retrieved') or []))}")
        if isinstance(row.get("answer"), str):
            body += (f"<br><b>answer:</b> {html.escape(readable_answer(row['answer']))}"
                     f"<br><b>cited sources:</b> {html.escape(', '.join(row.get('cited') or []) or '(none cited)')}")
        body += "</div>"
    return section("Worst questions", body)


def worst_questions(result, metric: str, per_mode: int = 5):
    """The ``per_mode`` worst questions per mode at its baseline configuration (largest top-k)."""
    import pandas as pd

    details = getattr(result, "details", None) or {}
    per_query = result.per_query
    base = T.baseline_rows(result.results)
    if base.empty or per_query is None or per_query.empty:
        return None
    rows = []
    for mode, group in base[base["metric"] == metric].groupby("mode", sort=False):
        config = group.sort_values("top_k")["config"].iloc[-1]
        scores = per_query[(per_query["config"] == config) & (per_query["metric"] == metric)]
        for _, s in scores.sort_values(["score", "qid"]).head(per_mode).iterrows():
            info = details.get(config, {}).get(str(s["qid"]), {})
            rows.append({"mode": mode, "config": config, "qid": s["qid"], "score": s["score"], **info})
    return pd.DataFrame(rows)


def ir_sections(data: dict, manifest: dict) -> list:
    """An IR mode comparison: every mode's ranx metrics with seeded bootstrap CIs and paired tests
    against the baseline (bm25 when it ran, else the first mode), a bar chart, latency."""
    from rag_lab.evaluate.statistics import policy
    from rag_lab.report import comparison as C

    per_query = data["per_query"]
    baseline = "bm25" if "bm25" in per_query else next(iter(per_query))
    table = C.mode_table(per_query, baseline)
    shown = {"dataset": data["dataset"], "queries": data["queries"]["evaluated"],
             "split": data["queries"].get("split", "all"), "params": data["params"],
             "models": data["models"], "created": data["created"], "git_commit": manifest.get("git_commit"),
             "packages": manifest.get("packages")}
    from rag_lab.report.verdict import build_verdict, with_questions

    sections = [verdict_section(with_questions(build_verdict(per_query, table, skip=C.COVERAGE_METRICS), manifest))]
    body = (f"<p>Means with seeded 95 % bootstrap intervals (none below {C.MIN_INTERVAL_N} questions: a bootstrap of a "
            f"handful of values reflects n, not the mean's uncertainty); ▲/▼ = significant against {html.escape(baseline)} "
            f"by the comparison policy ({html.escape(policy.TEST_TEXT)}) after Holm correction over every mode × "
            "metric of the table: family-wise error ≤ 0.05 over every mark; the t and Fisher columns are exploratory. judged@10 is a coverage figure (how much "
            "of what was retrieved carries a judgement), shown but never tested.</p>"
            + table_html(C.wide_table(table).reset_index())
            + table_html(_metric_glossary(list(dict.fromkeys(table["metric"])), data.get("metric_definitions") or {}))
            + table_html(C.significance_table(table)))
    for metric in dict.fromkeys(table["metric"]):
        body += figure_html(F.mode_bars(table, metric), f"{metric} per mode, 95 % bootstrap CI")
    sections.append(section("Per-mode tables", body))
    if data.get("pooled") is not None:
        sections.append(section("Pooled: unjudged documents stating the answer", _pooled_html(data["pooled"])))
    latency = C.latency_frame(data.get("latencies_ms") or {})
    sections.append(section("Latency", table_html(latency) + (figure_html(F.latency_bars(latency), "retrieval latency per query")
                                                               if len(latency) else "")))
    sections.append(section("Run manifest", kv_table(shown), folded="manifest and settings (dataset, parameters, "
                                                                     "models, packages)"))
    return sections


def _metric_glossary(metrics: list[str], own: dict[str, str]):
    """Per metric: what it measures (the run's own definition first) and where it stops counting."""
    import pandas as pd

    from rag_lab.report.metric_notes import cutoff, definition

    return pd.DataFrame([{"metric": m, "what it measures": own.get(m) or definition(m) or "—", "cut-off": cutoff(m)}
                         for m in metrics])


def _pooled_html(pooled: list[dict]) -> str:
    import pandas as pd

    intro = ("<p>Per question and mode: documents in the top 10 that have no judgement for the question but state "
             "every key fact of its reference answer (numbers, amounts, percentages, codes the question does not "
             "state). Listed for review: they are <b>not</b> counted as relevant by any metric above.</p>")
    if not pooled:
        return intro + "<p>none</p>"
    frame = pd.DataFrame([{"question id": e["qid"], "mode": e["mode"], "rank": e["rank"], "document": e["document"],
                           "judged source": ", ".join(e["judged"]), "key facts": ", ".join(e["key_facts"]),
                           "question": e["question"]} for e in pooled])
    return intro + table_html(frame)
