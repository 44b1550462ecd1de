"""A run manifest as tables a reader scans, not JSON: nested sections become nested key/value
tables, lists of records a table with a column per key, lists of values one comma-separated line."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from rag_lab.report.page import Section

MAX_DEPTH = 3  # deeper than this, a value is shown as compact JSON (rare: per-item details)
MAX_ROWS = 50


def value_html(value: Any, depth: int = 0) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return html.escape(f"{value:.6g}")
    if isinstance(value, (str, int)):
        return html.escape(str(value))
    if depth >= MAX_DEPTH:
        return f"<code>{html.escape(json.dumps(value, ensure_ascii=False, default=str))}</code>"
    if isinstance(value, Mapping):
        return kv_table(value, depth + 1) if value else "—"
    if isinstance(value, (list, tuple)):
        if not value:
            return "—"
        if all(isinstance(v, Mapping) for v in value):
            return records_table(list(value), depth + 1)
        if all(not isinstance(v, (Mapping, list, tuple)) for v in value):
            return ", ".join(value_html(v, depth + 1) for v in value)
        return "<br>".join(value_html(v, depth + 1) for v in value)
    return html.escape(str(value))


def kv_table(pairs: Mapping[str, Any], depth: int = 0) -> str:
    """One row per key; a nested mapping is a table inside its cell."""
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{value_html(v, depth)}</td></tr>" for k, v in pairs.items())
    return f"<table><tbody>{rows}</tbody></table>"


def records_table(records: list[Mapping[str, Any]], depth: int = 0) -> str:
    """Records as rows, the union of their keys as columns (first seen first)."""
    columns = list(dict.fromkeys(k for r in records for k in r))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{value_html(r.get(c), depth)}</td>" for c in columns) + "</tr>"
                   for r in records[:MAX_ROWS])
    more = f"<caption>first {MAX_ROWS} of {len(records)}</caption>" if len(records) > MAX_ROWS else ""
    return f"<table>{more}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def manifest_section(manifest: dict) -> Section:
    """An ablation run's manifest (its main keys), folded: what a reader opens to reproduce the run."""
    keys = ["dataset", "dataset_root", "n_queries", "n_configs", "grid", "baseline", "rrf", "metrics", "document_key",
            "significance", "ci", "index_fingerprint", "embed_model", "models", "created", "git_commit", "versions"]
    shown = {k: manifest[k] for k in keys if k in manifest}
    return Section("Run manifest", kv_table(shown),
                   folded="manifest, grid and settings (dataset, baseline, significance, index, versions)")


def spot_check_section(manifest: dict) -> Section | None:
    """The ablation's spot check of the grid against live retrievers (None when the run has none)."""
    check = manifest.get("spot_check")
    return Section("Spot check", spot_check_html(check)) if check else None


def spot_check_html(check: dict) -> str:
    """The spot check: what was checked live, and which axis values (cells) it could not confirm."""
    from rag_lab.evaluate.ablation.spot_check import unconfirmed_text, unconfirmed_values

    checks = check.get("checks") or [check]
    status = ('<span class="ok">equal</span>' if check.get("equal")
              else '<span class="bad">DIFFERENT</span>')
    scope = ("every RRF k, prefetch, weight pair, cap and top-k value of the grid, "
             f"{check.get('questions_per_value', '?')} questions each" if "axes_checked" in check
             else "prefetch " + ", ".join(str(v) for v in check.get("prefetch_values", ["?"])))
    body = (f"<p>{len(checks)} live queries through {html.escape(check.get('what', check['mode']))} "
            f"({html.escape(scope)}), {sum(bool(c['equal']) for c in checks)} equal to the ranking the grid computed "
            f"from the cached candidate lists: {status}.</p>")
    unconfirmed = unconfirmed_values(check)
    if unconfirmed:
        body += ("<p class=\"bad\">Unconfirmed: " + html.escape(unconfirmed_text(unconfirmed)) + ". Every cell holding "
                 "one of these values is marked † in the tables and heatmaps below: it is what the grid's formula "
                 "computes from the cached lists, not what the engine returns. Measure such a configuration live "
                 "(<code>rag-lab ir</code> with its settings) before choosing it.</p>")
    body += (f"<p>First differing check (else the last): <code>{html.escape(check['config'])}</code>, question "
             f"{html.escape(str(check['qid']))} (“{html.escape(check.get('query', '')[:160])}”).</p>"
             f"<details><summary>both rankings (chunk ids)</summary><pre>live: {html.escape(', '.join(check['live']))}"
             f"\ngrid: {html.escape(', '.join(check['grid']))}</pre></details>")
    return body
