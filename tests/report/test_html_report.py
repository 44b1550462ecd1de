"""`rag-lab report`: one self-contained HTML file — checked statically and in headless Chromium
with the network blocked (no request leaves, the tables and figures render)."""

from __future__ import annotations

import re

import pytest

from rag_lab.report.notebooks import check_self_contained
from tests.report.chromium import open_offline, remote

# results first (the verdict), the settings last (folded)
SECTIONS = ("verdict", "per-mode-tables", "best-configurations-and-significance", "ablation-plots",
            "worst-questions", "latency-and-cost", "spot-check", "run-manifest")


def test_report_is_self_contained_and_complete(report_file):
    page = report_file.read_text()
    assert check_self_contained(page) == []
    assert "<script" not in page.lower() and "@font-face" not in page
    assert re.findall(r'<section id="([^"]+)">', page) == list(SECTIONS)
    assert re.search(r'<section id="run-manifest"><h2>Run manifest</h2>\s*<details><summary>', page)
    assert page.count("<svg") >= 4  # two k-line plots (nDCG, RAGAS recall) + one heatmap per mode + latency
    assert page.count("<table") >= 6
    assert "Spot check" in page and 'class="ok">equal' in page
    # folder dataset: RAGAS's ID-based context recall is recall@top-k again; the report shows it once
    assert "ID context recall (RAGAS)" not in page and "<th>id_<wbr>context_<wbr>recall</th>" not in page
    assert "Recall@top-k (ranx recall@k)" in page and "<th>recall@top_<wbr>k</th>" in page
    assert "<th>id_<wbr>context_<wbr>precision</th>" in page
    assert re.search(r"0\.\d{3} \[0\.\d{3}, [01]\.\d{3}\]", page)  # means with CIs
    # which error rate the marks control and over what; the per-family view is exploratory
    assert "family-wise error rate ≤ 0.05 over all" in page and "never called significant" in page
    assert "exploratory per-family Holm view" in page and "does RRF k matter?" in page
    assert "nDCG@top-k (ranx ndcg@k, k = top-k)" in page


def test_the_static_check_catches_remote_references():
    assert check_self_contained('<img src="https://cdn.example/x.png">')
    assert check_self_contained('<script src="require.js"></script>')
    assert check_self_contained("<style>@import url(//fonts.example/css);</style>")
    assert not check_self_contained('<a href="#top">top</a><img src="data:image/png;base64,AAAA">')


# Run, never skipped: `make test` installs Debian's chromium (as root); without it these fail and say so.
needs_chromium = pytest.mark.slow


@needs_chromium
def test_report_in_chromium_requests_nothing_and_renders(report_file, tmp_path):
    dom, requests = open_offline(report_file, tmp_path)
    assert remote(requests) == [], remote(requests)
    assert not [r for r in requests if r["net_error"]], requests  # no failed request either
    assert dom.count("<svg") >= 4 and dom.count("<table") >= 6
    for section in SECTIONS:
        assert f'id="{section}"' in dom


@needs_chromium
def test_chromium_check_sees_a_blocked_request(tmp_path):
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://images.example.invalid/x.png"></body></html>')
    _, requests = open_offline(page, tmp_path)
    leaked = remote(requests)
    assert [r["url"] for r in leaked] == ["http://images.example.invalid/x.png"]
    assert leaked[0]["net_error"] != 0  # blocked: it never left the machine


def test_report_command_and_a_clear_error(small_ablation, tmp_path, capsys):
    from rag_lab.cli.main import main

    out = tmp_path / "r.html"
    assert main(["report", str(small_ablation.run_dir), "-o", str(out)]) == 0
    assert out.exists() and str(out) in capsys.readouterr().out
    assert main(["report", str(tmp_path / "nothing-here")]) == 2
    assert "no manifest.json" in capsys.readouterr().err
