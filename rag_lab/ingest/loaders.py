"""Load documents with the metadata every later stage relies on.

Every document carries ``doc_id`` and ``filename``; PDF pages carry a 1-based ``page``;
``source_url`` and ``title`` are added where known. Nothing is skipped silently: the
:class:`IngestReport` lists every file that was loaded or skipped, and why.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from llama_index.core import Document

from rag_lab.errors import DatasetError
from rag_lab.ingest.parse_cache import ParseCache, file_hash
from rag_lab.progress import progress_bar

# Bump when extraction or chunking changes what text comes out: it invalidates built indexes.
INGEST_VERSION = 2
# Bump when PDF text extraction changes: it invalidates the parse cache (not chunking changes).
PARSER_VERSION = f"pdfplumber-{INGEST_VERSION}"
TEXT_SUFFIXES = {".txt", ".md", ".rst"}
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | {".pdf"}

# pdfminer logs a warning per odd glyph; they say nothing a user can act on.
logging.getLogger("pdfminer").setLevel(logging.ERROR)


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass
class IngestReport:
    loaded: list[str] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)

    def skip(self, path: Path | str, reason: str) -> None:
        self.skipped.append(SkippedFile(str(path), reason))

    def to_dict(self) -> dict:
        return {
            "loaded": self.loaded,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


_CURRENCY_GAP = re.compile(r"([$€£])[ \t]+(?=\d)")


def _pdf_pages(path: Path) -> list[str]:
    """Text of each page. pdfplumber keeps table cells such as "$4,106" intact."""
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfplumber.utils.exceptions import PdfminerException

    try:
        with pdfplumber.open(path) as pdf:
            # Table cells come out as "$ 4,106": rejoin so amounts stay one searchable string.
            return [_CURRENCY_GAP.sub(r"\1", page.extract_text() or "") for page in pdf.pages]
    except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
        raise ValueError(f"encrypted PDF ({type(exc).__name__}); decrypt it first") from exc
    except (PdfminerException, PDFSyntaxError) as exc:
        cause = exc.args[0] if exc.args else exc
        if isinstance(cause, (PDFPasswordIncorrect, PDFEncryptionError)):
            raise ValueError("encrypted PDF; decrypt it first") from exc
        raise ValueError(f"corrupt or unreadable PDF ({cause!r})") from exc


def _iter_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts):
            yield path


def _cached_pdf_pages(path: Path, parse_cache: ParseCache | None) -> list[str]:
    if parse_cache is None:
        return _pdf_pages(path)
    digest = file_hash(path)
    pages = parse_cache.get(digest, PARSER_VERSION)
    if pages is None:
        pages = _pdf_pages(path)  # a failure raises before anything is cached
        parse_cache.put(digest, PARSER_VERSION, pages)
    return pages


def load_folder(
    folder: Path, source_urls: dict[str, str] | None = None, report: IngestReport | None = None,
    *, parse_cache: ParseCache | None = None, progress: bool = False,
) -> tuple[list[Document], IngestReport]:
    """Load every supported file below ``folder`` (one document per PDF page).

    ``parse_cache`` reuses the page texts of unchanged PDFs; ``progress`` shows one step per file.
    """
    folder = Path(folder)
    report = report or IngestReport()
    source_urls = source_urls or {}
    if not folder.is_dir():
        raise DatasetError(f"Document folder not found: {folder}", "pass an existing folder")
    documents: list[Document] = []
    files = list(_iter_files(folder))
    for path in progress_bar(files, desc="parsing", unit="file", enabled=progress):
        rel = path.relative_to(folder).as_posix()
        suffix = path.suffix.lower()
        if suffix not in SUPPORTED_SUFFIXES:
            report.skip(rel, f"unsupported file type {suffix or '(none)'}")
            continue
        base = {"filename": path.name, "doc_id": rel}
        if path.name in source_urls:
            base["source_url"] = source_urls[path.name]
        try:
            if suffix == ".pdf":
                pages = _cached_pdf_pages(path, parse_cache)
                if not any(p.strip() for p in pages):
                    report.skip(rel, "no extractable text (empty or scanned PDF)")
                    continue
                for number, text in enumerate(pages, start=1):
                    if text.strip():
                        documents.append(Document(text=text, metadata={**base, "page": number}))
            else:
                text = path.read_text(encoding="utf-8", errors="strict")
                if not text.strip():
                    report.skip(rel, "empty file")
                    continue
                documents.append(Document(text=text, metadata=base))
        except UnicodeDecodeError:
            report.skip(rel, "not valid UTF-8 text")
            continue
        except (ValueError, OSError) as exc:
            report.skip(rel, str(exc))
            continue
        report.loaded.append(rel)
    if not documents:
        detail = "; ".join(f"{s.path}: {s.reason}" for s in report.skipped) or "it holds no files"
        raise DatasetError(
            f"No indexable documents in {folder} ({detail})",
            "add .pdf, .txt, .md or .rst files with text in them",
        )
    return documents, report


def _open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def load_beir_corpus(path: Path, report: IngestReport | None = None) -> tuple[list[Document], IngestReport]:
    """A BEIR ``corpus.jsonl`` (or ``.jsonl.gz``) → one document per record (title + text)."""
    report = report or IngestReport()
    documents: list[Document] = []
    with _open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                doc_id = str(record["_id"])
            except (json.JSONDecodeError, KeyError) as exc:
                raise DatasetError(
                    f"{path}: line {line_no} is not a BEIR record ({exc})",
                    'each line must be a JSON object with "_id", "title" and "text"',
                ) from None
            title = (record.get("title") or "").strip()
            body = (record.get("text") or "").strip()
            if not (title or body):
                report.skip(f"{path.name}:{doc_id}", "empty title and text")
                continue
            text = f"{title}\n{body}" if title and body else title or body
            meta = {"doc_id": doc_id, "filename": doc_id, "title": title}
            documents.append(Document(text=text, metadata=meta, id_=f"beir:{doc_id}"))
            report.loaded.append(doc_id)
    if not documents:
        raise DatasetError(f"{path} holds no documents", "check the file is a BEIR corpus.jsonl")
    return documents, report
