"""The HTML of ``rag-lab compare``, results first and in the look of ``rag-lab report``: the verdict,
the paired differences, the per-question flips (both answers and top sources side by side), what
changed in the set-up, both manifests last, folded. Self-contained like every report page."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from rag_lab.evaluate.compare import Comparison
from rag_lab.evaluate.compare.facets import short_value
from rag_lab.evaluate.compare.flips import Flip
from rag_lab.report.answer_text import readable_answer
from rag_lab.report.html import render_document
from rag_lab.report.manifest_table import kv_table
from rag_lab.report.sections import section, table_html

FLIPS_SHOWN = 25  # per direction; --json holds every flip
SOURCE_CHARS = 300


def _fmt(value, signed: bool = False) -> str:
    if value is None or value != value:
        return "—"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def differences_table(result: Comparison) -> pd.DataFrame:
    rows = []
    for _, r in result.table.iterrows():
        marked = "▲ sig." if r["significant"] and r["delta"] > 0 else "▼ sig." if r["significant"] else ""
        rows.append({"mode": r["mode"], "metric": r["metric"] + (f" (judged: {r['basis']})" if r["judged"] and r["basis"] else " (judged)" if r["judged"] else ""),
                     "A": _fmt(r["mean_a"]), "B": _fmt(r["mean_b"]),
                     "B − A [95% CI]": (f"{_fmt(r['delta'], True)} [{_fmt(r['ci_low'], True)}, {_fmt(r['ci_high'], True)}]"
                                       if r["delta"] == r["delta"] else "—"),
                     "n": "—" if r["n"] != r["n"] else str(int(r["n"])),
                     "p (FWER-adjusted)": _fmt(r["p_adjusted"]),
                     "decided by": r["decided_by"] if isinstance(r["decided_by"], str) else "—",
                     "significance": marked or r["note"] or ""})
    return pd.DataFrame(rows)


def _side_html(label: str, side) -> str:
    source = html.escape(side.top_text[:SOURCE_CHARS]) + ("…" if len(side.top_text) > SOURCE_CHARS else "")
    return (f"<td><b>{label}</b> {side.score:.3f}<div class=\"answer\">{html.escape(readable_answer(side.answer))}</div>"
            f"<div class=\"def\">top source: {html.escape(side.top_source)}</div><div class=\"def\">{source}</div></td>")


def flips_html(title: str, items: list[Flip]) -> str:
    if not items:
        return f"<h3>{html.escape(title)}</h3><p><em>none</em></p>"
    rows = "".join(f"<tr><td>{html.escape(f.mode)}<br><b>{f.delta:+.3f}</b></td>"
                   f"<td>{html.escape(f.question)}<div class=\"def\">{html.escape(f.question_id)}</div></td>"
                   f"{_side_html('A', f.a)}{_side_html('B', f.b)}</tr>" for f in items[:FLIPS_SHOWN])
    more = f"<p>first {FLIPS_SHOWN} of {len(items)} (all in --json)</p>" if len(items) > FLIPS_SHOWN else ""
    return (f"<h3>{html.escape(title)} ({len(items)})</h3>{more}<table><thead><tr><th>mode, Δ</th><th>question</th>"
            f"<th>A: answer, top source</th><th>B: answer, top source</th></tr></thead><tbody>{rows}</tbody></table>")


def changes_html(result: Comparison) -> str:
    if not result.changes:
        return "<p>The manifests agree on every facet: dataset, questions, index, retrieval, generator, judge, code.</p>"
    frame = pd.DataFrame([{"facet": c.label, "field": path, "A": short_value(a), "B": short_value(b)}
                          for c in result.changes for path, a, b in c.fields])
    return table_html(frame)


def sections(result: Comparison) -> list:
    notes = "".join(f"<p>{html.escape(n)}</p>" for n in result.notes())
    verdict = section("Verdict", f'<p class="verdict">{html.escape(result.verdict())}</p>{notes}')
    table = section("Paired differences", "<p>B − A per mode × metric on the paired questions; ▲/▼ = significant "
                                          "under the lab's policy (Holm over every row with a p).</p>"
                    + table_html(differences_table(result)))
    metric = result.flip_metric or "—"
    flips = section(f"Flips on {metric}", flips_html("Better in B", result.better) + flips_html("Worse in B", result.worse))
    changed = section("What changed", changes_html(result))
    manifests = section("Run manifests", "<h3>A</h3>" + kv_table(result.run_a.manifest) + "<h3>B</h3>"
                        + kv_table(result.run_b.manifest), folded="both manifests")
    return [verdict, table, flips, changed, manifests]


def write_compare_report(result: Comparison, out: str | Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = render_document(f"rag-lab compare: {result.run_a.path.name} → {result.run_b.path.name}",
                           f"A {result.run_a.path} · B {result.run_b.path} · {result.pairing.text()}", sections(result))
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out
