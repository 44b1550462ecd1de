"""The HTML of `rag-lab compare --out`: results first, as `report`, self-contained — checked in the
page as written and in headless Chromium with the network blocked."""

from __future__ import annotations

import re

import pytest

from tests.evaluate.compare.builders import manifest, scores, write_run

ORDER = ["verdict", "paired-differences", "flips-on-ndcg-10", "what-changed", "run-manifests"]


@pytest.fixture
def page(tmp_path):
    from rag_lab.evaluate.compare import compare_runs
    from rag_lab.report.compare_page import write_compare_report

    a = write_run(tmp_path / "a", scores(12, lambda i: 0.8), answers={"q3": "the old <answer>"})
    values = scores(12, lambda i: 0.4)
    values["hybrid"]["ndcg@10"]["q3"] = 1.0
    b = write_run(tmp_path / "b", values, manifest(**{"models.embedding": "local:bge"}), answers={"q3": "the new answer"})
    return write_compare_report(compare_runs(a, b), tmp_path / "compare.html")


def test_the_page_opens_with_the_verdict_and_holds_the_flips(page):
    text = page.read_text(encoding="utf-8")
    assert re.findall(r'<section id="([^"]+)"', text) == ORDER
    verdict = re.search(r'<p class="verdict">(.*?)</p>', text).group(1)
    assert verdict.startswith("B differs from A in: embedding model (models.embedding: local:minilm → local:bge); bm25 ndcg@10 -0.400")
    assert "the old &lt;answer&gt;" in text and "the new answer" in text  # both answers, escaped
    assert "top source: hybrid-q3.pdf p. 2" in text
    assert "<script" not in text and "http" not in text.split("</nav>")[1].split("run-manifests")[0]


@pytest.mark.slow
def test_section_order_in_chromium_and_nothing_requested(page, tmp_path):
    from tests.report.chromium import open_offline, remote

    dom, requests = open_offline(page, tmp_path)
    assert re.findall(r'<section id="([^"]+)"', dom) == ORDER
    headings = re.findall(r"<h2>(.*?)</h2>", dom)
    assert headings == ["Verdict", "Paired differences", "Flips on ndcg@10", "What changed", "Run manifests"]
    assert remote(requests) == []
