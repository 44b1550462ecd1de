"""A run manifest as tables a reader scans, not JSON: nested sections become nested key/value
tables, lists of records a table with a column per key, lists of values one comma-separated line."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

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
