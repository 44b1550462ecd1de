"""Judged numbers against a person's labels, in the report and the ``eval`` summary: per judged metric
the verdict line (calibrated estimates, or "not calibrated — `rag-lab label RUN`"), the judge's
agreement with the labels, and per mode the raw judge mean, the PPI++ estimate with its interval and
the labels-only interval; differences between modes on the corrected estimates (the lab's decision
test, Holm over every calibrated metric's comparisons together). The numbers come from
:func:`rag_lab.evaluate.calibration.calibrated_judged`."""

from __future__ import annotations

import html

from rag_lab.evaluate.calibration import calibrated_judged
from rag_lab.evaluate.statistics import policy


def judged_calibration(run) -> dict:
    """{judged metric: MetricCalibration}; {} when the run scored no judged metric."""
    return calibrated_judged(run)


def _verdict(entry, run_path) -> str:
    return entry.verdict().replace("rag-lab label RUN", f"rag-lab label {run_path}")


def summary_lines(run, result: dict | None = None) -> list[str]:
    """The ``eval`` summary's lines: one verdict per judged metric, then the agreement line when labelled."""
    result = judged_calibration(run) if result is None else result
    lines = []
    for entry in result.values():
        lines.append(f"verdict: {_verdict(entry, run.path)}")
        if entry.agreement is not None:
            lines.append(f"  {entry.metric}: {entry.agreement.line()}")
    return lines


def _mode_rows(entry):
    import pandas as pd

    rows = []
    for mode, c in entry.by_mode.items():
        rows.append({"mode": mode, "judge's raw mean": c.raw_mean, "corrected (PPI++)": c.estimate,
                     "95 % interval": f"[{c.ci[0]:.3f}, {c.ci[1]:.3f}]" if c.n_labelled >= 2 else "—",
                     "labels only": f"{c.labels_only_estimate:.3f} [{c.labels_only_ci[0]:.3f}, {c.labels_only_ci[1]:.3f}]"
                     if c.n_labelled >= 2 else "—",
                     "labelled": f"{c.n_labelled} of {c.n}", "note": c.too_few_labels or ""})
    return pd.DataFrame(rows)


def _comparison_rows(entry):
    import pandas as pd

    return pd.DataFrame([{"mode": r["mode"], "against": r["baseline"], "Δ corrected": r["delta"],
                          "p (Holm)": r["p_adjusted"], "decided by": r["decided_by"],
                          "significant": ("▲ sig." if r["delta"] > 0 else "▼ sig.") if r["significant"] else "no"}
                         for r in entry.comparisons])


def calibration_sections(run) -> tuple[str, list]:
    """(HTML lines for the verdict, [the "Judged metrics against labels" section]); ("", []) without judged metrics."""
    from rag_lab.report.sections import section, table_html

    result = judged_calibration(run)
    if not result:
        return "", []
    verdict_html = "".join(f'<p class="verdict">{html.escape(_verdict(e, run.path))}</p>' for e in result.values())
    body = ("<p>A judge is a noisy instrument: a person's blind labels of a random sample of the answers "
            "(<code>rag-lab label RUN</code>) measure its error, and prediction-powered inference (PPI++, power-tuned) "
            "carries that error into each judged mean — unbiased whatever the judge, its interval narrower than the "
            "labels' alone as the judge gets better (coverage: <code>benchmarks/ppi_validity.py</code>, docs/evaluation.md).</p>")
    for entry in result.values():
        body += f"<h3>{html.escape(entry.metric)}</h3><p>{html.escape(_verdict(entry, run.path))}</p>"
        if not entry.calibrated:
            continue
        if entry.agreement is not None:
            body += f"<p>{html.escape(entry.agreement.line())} — labels of {html.escape(str(entry.labeller))}.</p>"
        if entry.people is not None:
            second, kappa, both = entry.people
            body += (f"<p>agreement between people: {html.escape(entry.labeller)} and {html.escape(second)}, "
                     f"Cohen's κ {kappa:.2f} over {both} answers both labelled.</p>")
        body += table_html(_mode_rows(entry))
        if entry.comparisons:
            body += (f"<p>Modes compared on the corrected estimates: {html.escape(policy.TEST_NAME)} on per-question "
                     f"corrected values, {policy.CORRECTION}-corrected over the {entry.comparisons[0]['family']} comparisons of "
                     f"every calibrated metric together, α = {policy.ALPHA:g}.</p>"
                     + table_html(_comparison_rows(entry)))
    return verdict_html, [section("Judged metrics against labels", body)]
