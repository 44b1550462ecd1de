"""Citation correctness on the real texas_childcare chunks (hand-checked).

Doc 1 is the BCY 2026 income-eligibility table (family of 4: annual $92,041, weekly $1,770;
family of 5: bi-weekly $4,106); Doc 2 is the PSoC sliding-fee chart, which states none of those.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rag_lab.evaluate.facts.citations import check_citations, split_claims
from rag_lab.ingest import chunk_documents, load_folder

PDFS = Path(__file__).resolve().parents[2] / "datasets" / "texas_childcare" / "pdfs"


@pytest.fixture(scope="module")
def chunks(tmp_path_factory) -> list[str]:
    folder = tmp_path_factory.mktemp("pdfs")
    for name in ("bcy-26-income-eligibility-and-maximum-psoc-twc.pdf", "bcy-26-psoc-chart-twc.pdf"):
        shutil.copy(PDFS / name, folder / name)
    documents, _ = load_folder(folder)
    nodes = chunk_documents(documents, 500, 0)
    income = next(n.get_content() for n in nodes if "$92,041" in n.get_content())
    chart = next(n.get_content() for n in nodes if n.metadata["filename"] == "bcy-26-psoc-chart-twc.pdf")
    assert "$92,041" not in chart and "$1,770" not in chart and "$4,106" not in chart
    return [income, chart]


CORRECT = "In Board Contract Year 2026 the annual income limit for a family of 4 is $92,041 [Doc 1]."


def test_a_correct_citation(chunks):
    check = check_citations(CORRECT, chunks)
    [claim] = check.claims
    assert claim.facts == ["4", "bcy26", "dollar_92041"] and claim.docs == [1] and claim.correct == [1]
    assert (check.checked, check.correct, check.precision, check.cites_anything) == (1, 1, 1.0, True)


def test_a_wrong_number_is_not_supported(chunks):
    check = check_citations(CORRECT.replace("$92,041", "$95,000"), chunks)
    assert (check.checked, check.correct, check.precision) == (1, 0, 0.0)


def test_citing_the_wrong_chunk_is_not_supported(chunks):
    check = check_citations(CORRECT.replace("[Doc 1]", "[Doc 2]"), chunks)
    assert check.claims[0].docs == [2] and check.precision == 0.0


def test_trailing_citations_and_sentences_without_facts(chunks):
    answer = ("The bi-weekly limit for a family of 5 is $4,106. [Doc 1] "
              "Parents can apply at their local Workforce Solutions office [Doc 2].")
    claims = split_claims(answer, 2)
    assert [(c.docs, c.facts) for c in claims] == [([1], ["5", "dollar_4106"]), ([2], [])]
    check = check_citations(answer, chunks)
    # the second sentence states no key fact: not checkable offline, never counted as correct
    assert (check.checked, check.correct, check.unverifiable, check.precision) == (1, 1, 1, 1.0)


def test_a_sentence_citing_two_chunks_is_checked_jointly(chunks):
    check = check_citations("The annual limit is $92,041 and the weekly limit is $1,770 [Doc 1, 2].", chunks)
    # Doc 1 states both amounts, Doc 2 neither: one of the two citations is right
    assert (check.checked, check.correct, check.precision) == (2, 1, 0.5)


def test_an_answer_citing_nothing(chunks):
    check = check_citations("The annual limit for a family of 4 is $92,041.", chunks)
    assert check.claims == [] and check.cites_anything is False and check.precision is None
    assert check_citations("See [Doc 7].", chunks).cites_anything is False  # only Docs 1–2 exist


def test_a_citation_of_a_missing_document_is_wrong(chunks):
    # [Doc 7] of 2 chunks was dropped, so this scored 1.0
    check = check_citations("$4,106 [Doc 1]. $287 [Doc 7]", chunks[:1] + chunks[1:])
    assert [(c.docs, c.missing) for c in check.claims] == [([1], []), ([], [7])]
    assert (check.checked, check.correct, check.missing, check.precision) == (2, 1, 1, 0.5)
    # wrong even in a sentence without key facts (nothing to check it against)
    check = check_citations("Parents apply at Workforce Solutions [Doc 3].", chunks)
    assert (check.checked, check.correct, check.precision, check.cites_anything) == (1, 0, 0.0, False)
