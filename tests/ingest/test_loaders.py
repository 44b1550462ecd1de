"""Loaders: PDFs → one document per page with metadata; mixed folders → loaded + skipped, with reasons."""

from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path

import pytest

from rag_lab.errors import DatasetError
from rag_lab.ingest import chunk_documents, load_beir_corpus, load_folder
from tests.ingest.pdfs import blank_pdf, encrypted_pdf

REPO = Path(__file__).resolve().parents[2]
TEXAS = REPO / "datasets" / "texas_childcare"
BCY = "bcy-26-income-eligibility-and-maximum-psoc-twc.pdf"


@pytest.fixture(scope="module")
def texas_docs():
    spec = json.loads((TEXAS / "dataset.json").read_text(encoding="utf-8"))
    documents, report = load_folder(TEXAS / spec["documents"], spec["source_urls"])
    return spec, documents, report


def test_texas_pdfs_one_document_per_page_with_metadata(texas_docs):
    import pypdfium2

    spec, documents, report = texas_docs
    pdfs = sorted(p.name for p in (TEXAS / "pdfs").glob("*.pdf"))
    assert sorted(report.loaded) == pdfs and report.skipped == []
    for name in pdfs:
        pages = [d.metadata["page"] for d in documents if d.metadata["filename"] == name]
        n_pages = len(pypdfium2.PdfDocument(str(TEXAS / "pdfs" / name)))  # an independent PDF reader
        assert pages == list(range(1, n_pages + 1)), name  # 1-based, in order, none lost
    for doc in documents:
        meta = doc.metadata
        assert meta["doc_id"] == meta["filename"]
        assert meta["source_url"] == spec["source_urls"][meta["filename"]]
        assert meta["source_url"].endswith("/" + meta["filename"])
        assert doc.text.strip()


def test_bcy_table_amounts_survive_extraction_and_chunking(texas_docs):
    _, documents, _ = texas_docs
    page1 = [d for d in documents if d.metadata["filename"] == BCY and d.metadata["page"] == 1]
    assert len(page1) == 1
    chunks = chunk_documents(page1)
    text = "\n".join(c.get_content() for c in chunks)
    # Family of 5 bi-weekly limit, family of 4 annual limit, family of 3 annual limit (BCY 2026 table).
    for amount in ("$4,106", "$92,041", "$77,315"):
        assert amount in text, amount
    assert "$ 4,106" not in text  # the table-cell gap is rejoined
    assert all(c.metadata["page"] == 1 and c.metadata["filename"] == BCY for c in chunks)


@pytest.fixture
def mixed_folder(tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "notes.txt").write_text("Plain text about child care subsidies.", encoding="utf-8")
    (folder / "readme.md").write_text("# Heading\n\nMarkdown about income limits.", encoding="utf-8")
    (folder / "sub" / "guide.rst").write_text("Guide\n=====\n\nRestructured text on eligibility.", encoding="utf-8")
    (folder / "blank.pdf").write_bytes(blank_pdf())
    (folder / "corrupt.pdf").write_bytes(random.Random(0).randbytes(4096))
    real = (TEXAS / "pdfs" / BCY).read_bytes()
    (folder / "truncated.pdf").write_bytes(real[: len(real) // 2])
    (folder / "locked.pdf").write_bytes(encrypted_pdf("Confidential salary table"))
    (folder / "report.docx").write_bytes(b"PK\x03\x04 not really a docx")
    (folder / "empty.txt").write_text("   \n", encoding="utf-8")
    (folder / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    return folder


def test_mixed_folder_loads_good_files_and_reports_each_skip(mixed_folder):
    documents, report = load_folder(mixed_folder)
    assert sorted(report.loaded) == ["notes.txt", "readme.md", "sub/guide.rst"]
    by_id = {d.metadata["doc_id"]: d for d in documents}
    assert set(by_id) == {"notes.txt", "readme.md", "sub/guide.rst"}
    assert "Markdown about income limits" in by_id["readme.md"].text
    assert by_id["sub/guide.rst"].metadata["filename"] == "guide.rst"
    assert all("page" not in d.metadata for d in documents)  # only PDF pages have one

    reasons = {s.path: s.reason.lower() for s in report.skipped}
    assert set(reasons) == {"blank.pdf", "corrupt.pdf", "truncated.pdf", "locked.pdf", "report.docx", "empty.txt",
                            "latin1.txt"}
    assert "no extractable text" in reasons["blank.pdf"]
    assert "corrupt" in reasons["corrupt.pdf"] and "corrupt" in reasons["truncated.pdf"]
    assert "encrypted" in reasons["locked.pdf"]
    assert "unsupported" in reasons["report.docx"] and ".docx" in reasons["report.docx"]
    assert "empty" in reasons["empty.txt"]
    assert "utf-8" in reasons["latin1.txt"]
    assert report.to_dict()["skipped"] == [{"path": s.path, "reason": s.reason} for s in report.skipped]


def test_encrypted_fixture_is_a_real_encrypted_pdf(tmp_path):
    """Guards the test above: the file is skipped for its encryption, not for being malformed."""
    import pdfplumber

    path = tmp_path / "locked.pdf"
    path.write_bytes(encrypted_pdf("Confidential salary table"))
    with pdfplumber.open(path, password="user-secret") as pdf:
        assert "Confidential salary table" in pdf.pages[0].extract_text()


def test_folder_of_only_bad_files_is_a_dataset_error_naming_them(tmp_path):
    (tmp_path / "blank.pdf").write_bytes(blank_pdf())
    (tmp_path / "x.docx").write_bytes(b"PK")
    with pytest.raises(DatasetError) as info:
        load_folder(tmp_path)
    message = str(info.value)
    assert "No indexable documents" in message
    assert "blank.pdf" in message and "x.docx" in message


def test_empty_folder_is_a_clear_dataset_error(tmp_path):
    with pytest.raises(DatasetError, match="No indexable documents.*holds no files"):
        load_folder(tmp_path)
    with pytest.raises(DatasetError, match="not found"):
        load_folder(tmp_path / "missing")


def test_hidden_files_are_ignored(tmp_path):
    (tmp_path / "a.txt").write_text("visible", encoding="utf-8")
    (tmp_path / ".DS_Store").write_bytes(b"\0\1")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref", encoding="utf-8")
    documents, report = load_folder(tmp_path)
    assert report.loaded == ["a.txt"] and report.skipped == []


RECORDS = [
    {"_id": "d1", "title": "Aspirin", "text": "Aspirin reduces fever."},
    {"_id": 42, "title": "", "text": "A numeric id and no title."},
    {"_id": "d3", "title": "Only a title", "text": ""},
]


def _write_corpus(path: Path, lines: list[str]) -> Path:
    data = "\n".join(lines) + "\n"
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["corpus.jsonl", "corpus.jsonl.gz"])
def test_beir_corpus_one_document_per_record(tmp_path, name):
    path = _write_corpus(tmp_path / name, [json.dumps(r) for r in RECORDS] + [""])
    documents, report = load_beir_corpus(path)
    assert [d.metadata["doc_id"] for d in documents] == ["d1", "42", "d3"]
    assert report.loaded == ["d1", "42", "d3"]
    assert [d.metadata["title"] for d in documents] == ["Aspirin", "", "Only a title"]
    assert documents[0].text == "Aspirin\nAspirin reduces fever."
    assert documents[1].text == "A numeric id and no title."
    assert documents[2].text == "Only a title"
    assert [d.id_ for d in documents] == ["beir:d1", "beir:42", "beir:d3"]


def test_beir_record_without_text_is_reported(tmp_path):
    lines = [json.dumps(RECORDS[0]), json.dumps({"_id": "blank", "title": " ", "text": ""})]
    documents, report = load_beir_corpus(_write_corpus(tmp_path / "corpus.jsonl", lines))
    assert len(documents) == 1
    assert [(s.path, s.reason) for s in report.skipped] == [("corpus.jsonl:blank", "empty title and text")]


@pytest.mark.parametrize("bad", ['{"_id": "d2", "title": "x", "text": ', '{"title": "no id"}'])
def test_beir_malformed_line_names_the_line(tmp_path, bad):
    path = _write_corpus(tmp_path / "corpus.jsonl.gz", [json.dumps(RECORDS[0]), bad, json.dumps(RECORDS[2])])
    with pytest.raises(DatasetError, match=r"corpus\.jsonl\.gz: line 2 is not a BEIR record"):
        load_beir_corpus(path)


def test_bcy_tables_are_written_as_self_describing_rows(texas_docs):
    """Each row of both BCY tables names its table, its family size and every column, and no
    number of the flat text is lost."""
    import pdfplumber

    from rag_lab.ingest.tables import parse_row

    _, documents, _ = texas_docs
    text = next(d.text for d in documents if d.metadata["filename"] == BCY and d.metadata["page"] == 1)
    lines = text.splitlines()
    assert ("Income Eligibility Limits | Family Size 5 | Annual: $106,768 | Monthly: $8,897 | Weekly: $2,053 | "
            "Bi-Monthly: $4,449 | Bi-Weekly: $4,106") in lines
    assert ("Maximum Parent Share of Cost | Family Size 5 | Annual: $7,474 | Monthly: $623 | Weekly: $144 | "
            "Bi-Monthly: $311 | Bi-Weekly: $287") in lines
    rows = [parse_row(line) for line in lines if parse_row(line)]
    assert len(rows) == 30  # 15 family sizes × 2 tables
    assert lines[:3] == ["Income Eligibility Limits and Maximum Parent Share of Cost", "Board Contract Year 2026",
                         "Income Eligibility Limits"]
    assert lines[-1].startswith("Optional Use in federal Fiscal Year 2025")  # the text under the tables
    with pdfplumber.open(TEXAS / "pdfs" / BCY) as pdf:
        flat = pdf.pages[0].extract_text().replace("$ ", "$")
    amounts = re.compile(r"\$\d[\d,]*")
    assert sorted(amounts.findall(text)) == sorted(amounts.findall(flat))  # all 150 cells, each once


def test_table_rows_are_never_cut_by_chunking(texas_docs):
    from rag_lab.ingest.tables import parse_row

    _, documents, _ = texas_docs
    page1 = [d for d in documents if d.metadata["filename"] == BCY]
    chunks = chunk_documents(page1, chunk_words=120)  # small chunks: the page needs several
    assert len(chunks) > 2
    for chunk in chunks:
        for line in chunk.get_content().splitlines():
            if "|" in line:
                assert parse_row(line), line  # a whole row, never a piece of one
