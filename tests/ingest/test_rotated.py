"""Sideways table headers read forwards: the bundled board-rate PDFs, table rows and plain text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pdfplumber
import pytest

from rag_lab.ingest import load_folder, loaders
from rag_lab.ingest.parse_cache import ParseCache, file_hash
from rag_lab.ingest.rotated import direction, read_rotated_forwards, vertical_text
from rag_lab.ingest.tables import page_text

FULL = Path(__file__).resolve().parents[2] / "datasets" / "texas_childcare_full" / "pdfs"
BCY25 = FULL / "bcy25-board-max-provider-payment-rates-4-age-groups-twc.pdf"
BCY26 = FULL / "bcy26-board-max-provider-payment-rates-twc.pdf"


@pytest.fixture(scope="module")
def first_pages():
    with pdfplumber.open(BCY25) as bcy25, pdfplumber.open(BCY26) as bcy26:
        yield bcy25.pages[0], bcy26.pages[0]


def test_the_board_rate_headers_are_set_bottom_to_top(first_pages):
    bcy25, _ = first_pages
    turned = [c for c in bcy25.chars if not c["upright"]]
    assert turned and {direction(c) for c in turned} == {"btt"}
    assert direction({"matrix": (10, 0, 0, 10, 0, 0)}) == "ltr"
    assert direction({"matrix": (0, -10, 10, 0, 0, 0)}) == "ttb"


def test_table_rows_name_their_columns_forwards(first_pages):
    bcy25, bcy26 = first_pages
    text25, text26 = page_text(bcy25), page_text(bcy26)
    assert "Provider Rating: Reg | Infant FT: $44.40 | Infant PT: $40.66 | Toddler FT: $40.10" in text25
    assert "| School-age BT: $31.68" in text25
    # headers that overflow their cell by a character or two stay whole, and out of the caption
    assert ("\nAlamo-20 | Provider Type LCCC | Provider Rating: Reg | 0 months– 11 months FT: $46.00 | "
            "0 months– 11 months PT: $42.40 | 12 months– 17 months FT: $45.40 | 12 months- 17 months PT: $42.00 | "
            "18 months – 23 months FT: $44.40 |") in text26
    assert "| 6 years – 13 years FT: $40.80" in text26
    for text in (text25, text26):
        assert "tnafnI" not in text and "shtnom" not in text and "sraey" not in text


def test_plain_text_reads_the_turned_words_forwards(first_pages):
    bcy25, bcy26 = first_pages
    before = bcy25.extract_text()
    assert "tnafnI" in before  # what pdfplumber gives by default
    after = read_rotated_forwards(bcy25).extract_text()
    assert "Infant" in after.split() and "Toddler" in after.split() and "tnafnI" not in after
    words26 = read_rotated_forwards(bcy26).extract_text().split()
    assert "months" in words26 and "shtnom" not in words26


def test_a_two_line_sideways_cell_reads_line_by_line(first_pages):
    _, bcy26 = first_pages
    page = read_rotated_forwards(bcy26)
    cell = [c for c in page.chars if not c["upright"] and 140 <= c["x0"] < 170 and c["top"] < 150]
    assert vertical_text(cell) == "0 months–\n11 months\nFT"


def test_an_upright_page_is_left_alone(first_pages):
    with pdfplumber.open(FULL / "wd-24-23-att1-twc.pdf") as pdf:
        page = pdf.pages[0]
        assert read_rotated_forwards(page) is page


def test_a_parse_from_the_old_parser_is_not_served(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(BCY25, folder / BCY25.name)
    with ParseCache(tmp_path / "parsed.sqlite") as cache:
        cache.put(file_hash(BCY25), "pdfplumber-5", ["TF tnafnI"] * 28)  # what the old parser stored
        documents, _ = load_folder(folder, parse_cache=cache)
    assert loaders.PARSER_VERSION != "pdfplumber-5"
    assert "Infant FT: $44.40" in documents[0].text and "tnafnI" not in documents[0].text
