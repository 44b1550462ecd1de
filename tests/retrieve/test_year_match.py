"""Version-aware ranking: document versions from file names, the question's from the tokenizer,
the boost on fused results and its explanation (unit), and the real path through `rag-lab search`."""

from __future__ import annotations

import re

from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.retrieve.year_match import boost_by_year, document_versions, matched_versions, versions_in_text


def test_document_versions_come_from_the_file_name():
    assert document_versions("bcy25-board-max-provider-payment-rates-4-age-groups-twc.pdf") == {"bcy25"}
    assert document_versions("bcy-26-psoc-chart-twc.pdf") == {"bcy26"}
    assert document_versions("bcy2025-psoc-chart-twc.pdf") == {"bcy25"}
    assert document_versions("acf-218-qpr-ffy-2022-for-texas.pdf") == {"ffy22"}
    assert document_versions("tx-ccdf-state-plan-ffy2025-2027-approved.pdf") == {"ffy25", "ffy26", "ffy27"}
    assert document_versions(
        "commission-meeting-materials-01.10.23-item3-valuation-effectiveness-child-care-report-88-leg.pdf") == {"leg88"}
    assert document_versions("evaluation-effectiveness-child-care-program-84-legislature-twc.pdf") == {"leg84"}
    assert document_versions("evaluation-of-the-effectiveness-of-child-care-report-to-86th-legislature-2019-twc.pdf") == {"leg86"}
    assert document_versions("wd-24-23-att1-twc.pdf") == frozenset()
    assert document_versions("2025-2027-tx-state-plan-stakeholder-input-twc.pdf") == frozenset()  # bare years: no program


def test_question_versions_and_matching():
    assert versions_in_text("What are the BCY 2026 board maximum rates for infants?") == {"bcy26"}
    assert versions_in_text("In federal fiscal year 2023, how many children were served?") == {"ffy23"}
    assert versions_in_text("What did the report to the 88th Legislature find?") == {"leg88"}
    assert versions_in_text("How are infants defined?") == set()
    assert matched_versions({"bcy26"}, frozenset({"bcy25"})) == []
    assert matched_versions({"fy23"}, frozenset({"ffy23"})) == ["fy23"]  # whose fiscal year is not said
    assert matched_versions({"ffy23"}, frozenset({"sfy23"})) == []


def _hit(filename: str, score: float) -> NodeWithScore:
    return NodeWithScore(node=TextNode(text=filename, id_=filename, metadata={"filename": filename,
                                                                              "explanation": {"fused_score": score}}),
                         score=score)


def test_the_named_version_moves_up_and_says_why():
    hits = [_hit("tx-ccdf-state-plan-ffy2025-2027-approved.pdf", 0.030), _hit("bcy25-board-max-rates.pdf", 0.029),
            _hit("bcy26-board-max-rates.pdf", 0.020), _hit("wd-24-23-att1-twc.pdf", 0.010)]
    ranked = boost_by_year("BCY 2026 infant full-time rate", hits, weight=0.5)
    assert [r.node.metadata["filename"] for r in ranked] == [
        "bcy26-board-max-rates.pdf", "tx-ccdf-state-plan-ffy2025-2027-approved.pdf", "bcy25-board-max-rates.pdf",
        "wd-24-23-att1-twc.pdf"]
    assert abs(ranked[0].score - (0.020 + 0.5 * 0.030)) < 1e-12
    assert ranked[0].node.metadata["explanation"]["year_match"] == {
        "question": ["bcy26"], "document": ["bcy26"], "matched": ["bcy26"], "added": 0.015}
    assert ranked[0].node.metadata["explanation"]["fused_score"] == 0.020  # the fusion's own terms stay
    assert ranked[2].node.metadata["explanation"]["year_match"]["added"] == 0.0


def test_questions_naming_no_version_and_weight_zero_are_left_alone():
    hits = [_hit("a.pdf", 0.03), _hit("bcy26-x.pdf", 0.02)]
    assert boost_by_year("How are infants defined?", hits, 0.5) is hits
    assert boost_by_year("BCY 2026 rates", hits, 0.0) is hits


_YEAR_LINE = re.compile(r"year match: question (\S+) \| document (\S+) \| matched (\S+) → \+([0-9.]+)")
_HEADER = re.compile(r"^\s*\d+\. \[([0-9.]+)\] (\S+)")


def test_search_explain_shows_the_year_match(texas_index, lab_cli):
    code, out, _ = lab_cli("search", "texas_childcare", "BCY 2026 parent share of cost", "--mode", "fusion",
                           "--year-boost", "0.5", "--explain")
    assert code == 0
    headers = [m for m in map(_HEADER.search, out.splitlines()) if m]
    years = [m for m in map(_YEAR_LINE.search, out.splitlines()) if m]
    assert len(headers) == len(years) == 5
    for header, year in zip(headers, years):
        assert year.group(1) == "bcy26"
        named = header.group(2).startswith("bcy-26")
        assert year.group(3) == ("bcy26" if named else "—") and (float(year.group(4)) > 0) == named
    assert any(h.group(2).startswith("bcy-26") for h in headers)
    code, plain, _ = lab_cli("search", "texas_childcare", "BCY 2026 parent share of cost", "--mode", "fusion", "--explain")
    assert code == 0 and "year match" not in plain  # off by default
