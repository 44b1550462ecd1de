"""Every report kind, as a person reads it: in a 1,400 px Chromium window nothing sticks out or is
cut, every table column has a name, no cell reads "nan", and the evaluation report has its figure."""

from __future__ import annotations

import re

import pytest

from rag_lab.report.html import build_report, write_report
from tests.report.chromium import measure_layout, screenshot

# Run, never skipped: `make test` installs Debian's chromium (as root); without it these fail and say so.
needs_chromium = pytest.mark.slow

WIDTH = 1400


@pytest.fixture(params=["eval", "ir", "ablation"])
def report_page(request, tmp_path):
    run = request.getfixturevalue({"eval": "small_eval_run", "ir": "small_ir_run", "ablation": "small_ablation"}[
        request.param])
    run_dir = getattr(run, "run_dir", run)
    return request.param, write_report(run_dir, tmp_path / f"{request.param}.html")


def _cells(page: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", page, re.S)]


def test_report_reads_cleanly(report_page):
    kind, path = report_page
    page = path.read_text(encoding="utf-8")
    assert not [c for c in _cells(page) if re.search(r"\bnan\b", c, re.I)], "a cell reads 'nan' where '—' is meant"
    headers = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th>(.*?)</th>", page, re.S)]
    assert all(headers), "a table column without a name"
    subtitle = re.search(r'<p class="sub">(.*?)</p>', page, re.S).group(1)
    assert "{" not in subtitle and "&#x27;" not in subtitle, f"subtitle is a raw structure: {subtitle[:120]}"
    assert page.count("<figure>") >= 1, f"the {kind} report has no figure"


def test_eval_report_counts_failed_judged_metrics(small_eval_run):
    page = build_report(small_eval_run)
    assert "Failed metrics" in page and "faithfulness" in page
    table = page[page.index("Per-mode tables"):page.index("Failed metrics")]
    assert "<th>bm25 failed</th>" in table
    assert re.search(r"of \d+</td><td>[^<]*(RagasOutputParserException|NaN score)", page), \
        "the failure table names the reason"
    assert "texas_childcare · 4 questions × 3 modes (bm25, dense, hybrid)" in page
    # the marks' legend names the test that makes them (the comparison policy's), not the exploratory ones
    assert "significant against bm25 by the lab's paired test (sign-flip ∨ empirical likelihood), Holm-corrected" in page
    assert "by both paired tests" not in page


@needs_chromium
def test_report_fits_1400_px_without_cut_tables(report_page, tmp_path):
    kind, path = report_page
    layout = measure_layout(path, tmp_path, width=WIDTH)
    assert layout["width"] == WIDTH
    assert layout["tables"] >= 2
    assert layout["scrollWidth"] <= WIDTH, f"{kind} report is {layout['scrollWidth']} px wide"
    assert layout["cut"] == [], f"{kind} report: elements past {WIDTH} px or clipped: {layout['cut'][:5]}"
    shot = screenshot(path, tmp_path / f"{kind}.png", tmp_path)  # kept with the test's tmp files for a person to look at
    from PIL import Image

    with Image.open(shot) as image:  # a rendered page, not a blank window
        assert image.width == WIDTH
        colours = image.convert("L").getcolors(maxcolors=1 << 16) or []
        assert len(colours) > 16, f"the {kind} screenshot is (nearly) blank: {len(colours)} grey levels"


@needs_chromium
def test_layout_check_sees_a_cut_table(tmp_path):
    page = tmp_path / "wide.html"
    cells = "".join(f"<td>column_with_a_long_name_{i}</td>" for i in range(40))
    page.write_text(f"<!DOCTYPE html><html><body><table><tr>{cells}</tr></table></body></html>", encoding="utf-8")
    layout = measure_layout(page, tmp_path, width=WIDTH)
    assert layout["scrollWidth"] > WIDTH and layout["cut"] and layout["cut"][0]["tag"] == "TABLE"
