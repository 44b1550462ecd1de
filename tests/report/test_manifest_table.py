"""A report's run manifest is tables, not JSON dicts: grid, significance and versions are readable."""

from __future__ import annotations

import re

from rag_lab.report.manifest_table import kv_table
from rag_lab.report.sections import manifest_section

MANIFEST = {
    "dataset": "texas_childcare", "n_queries": 10,
    "grid": {"modes": ["fusion", "hybrid"], "fusion_k": [1, 60], "weights": [[1.0, 1.0], [0.7, 1.3]]},
    "significance": {"test": "paired t", "alpha": 0.05, "correction": "holm",
                     "families": [{"axis": "fusion_k", "size": 3}, {"axis": "prefetch", "size": 2}]},
    "versions": {"python": "3.12.3", "ranx": "0.3.20"},
    "created": "2026-11-27T16:00:00+00:00", "git_commit": None,
}


def test_manifest_section_is_nested_tables_without_json():
    body = manifest_section(MANIFEST).body
    assert "{" not in re.sub(r"<[^>]+>", "", body)  # no dict printed as text
    assert "<th>fusion_k</th><td>1, 60</td>" in body  # a list of values: one line
    assert "<th>python</th><td>3.12.3</td>" in body  # versions: a row each
    # a list of records: one table, a column per key
    assert "<thead><tr><th>axis</th><th>size</th></tr></thead>" in body
    assert "<td>fusion_k</td><td>3</td>" in body
    assert "<th>git_commit</th><td>—</td>" in body


def test_values_are_escaped():
    assert "&lt;script&gt;" in kv_table({"note": "<script>", "nested": {"x": "<b>"}})
    assert "<b>" not in kv_table({"nested": {"x": "<b>"}})
