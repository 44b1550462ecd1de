"""Load documents with the metadata every later stage relies on.

Every document carries ``doc_id`` and ``filename``; PDF pages carry a 1-based ``page``;
``source_url`` and ``title`` are added where known. Nothing is skipped silently: the
:class:`IngestReport` lists every file that was loaded or skipped, and why.
"""

from __future__ import annotations

import gzip
import json
import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Collection, Iterator
from io import BytesIO

from llama_index.core import Document

from rag_lab.errors import DatasetError
from rag_lab.ingest.tables import page_text
from rag_lab.ingest.parse_cache import ParseCache, file_hash
from rag_lab.progress import progress_bar

# Bump when extraction or chunking changes what text comes out: it invalidates built indexes.
INGEST_VERSION = 6
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


ParseResult = list[str] | OSError | ValueError
# Parses PDFs elsewhere (Ray tasks): yields (path, page texts or why not) as each one lands.
ParseMany = Callable[[list[Path]], Iterator[tuple[Path, ParseResult]]]


def _pdf_pages(path: Path | BytesIO) -> list[str]:
    """Text of each page, tables written as self-describing rows (:func:`tables.page_text`)."""
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfplumber.utils.exceptions import PdfminerException

    try:
        with pdfplumber.open(path) as pdf:
            return [page_text(page) for page in pdf.pages]
    except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
        raise ValueError(f"encrypted PDF ({type(exc).__name__}); decrypt it first") from exc
    except (PdfminerException, PDFSyntaxError) as exc:
        cause = exc.args[0] if exc.args else exc
        if isinstance(cause, (PDFPasswordIncorrect, PDFEncryptionError)):
            raise ValueError("encrypted PDF; decrypt it first") from exc
        raise ValueError(f"corrupt or unreadable PDF ({cause!r})") from exc


def iter_document_files(folder: Path, exclude: Collection[Path] = ()) -> Iterator[Path]:
    """Every file below ``folder`` that is not hidden nor in ``exclude`` (a dataset's own files:
    its questions, description, dev split), sorted: what a folder dataset is made of."""
    skip = {Path(p).resolve() for p in exclude}
    for path in sorted(folder.rglob("*")):
        if (path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
                and path.resolve() not in skip):
            yield path


def _parse_worker(path: Path) -> ParseResult:
    return parse_pdf(path)


def parse_pdf(source: Path | bytes) -> ParseResult:
    """A PDF's page texts from its path or its bytes (a worker without the file system), or why not."""
    try:
        return _pdf_pages(BytesIO(source) if isinstance(source, bytes) else source)
    except (OSError, ValueError) as exc:  # returned, not raised: the caller records a skipped file
        return exc


def _parse_pdfs(paths: list[Path], parse_cache: ParseCache | None, bar,
                parse_many: ParseMany | None = None) -> dict[Path, ParseResult]:
    """Each PDF's page texts (or why it cannot be read): from the cache when unchanged, else parsed,
    in worker processes when there are several (pdfminer is pure Python: one core per file), the
    largest file first so that the workers finish together, or by ``parse_many`` (a Ray cluster).
    Every parse is cached as it lands."""
    parsed: dict[Path, list[str] | OSError | ValueError] = {}
    digests: dict[Path, str] = {}
    todo: list[Path] = []
    for path in paths:
        pages = None
        if parse_cache is not None:
            digests[path] = file_hash(path)
            pages = parse_cache.get(digests[path], PARSER_VERSION)
        if pages is None:
            todo.append(path)
        else:
            parsed[path] = pages
            bar.update(1)

    def landed(path: Path, result: list[str] | OSError | ValueError) -> None:
        parsed[path] = result
        if parse_cache is not None and isinstance(result, list):
            parse_cache.put(digests[path], PARSER_VERSION, result)
        bar.update(1)

    todo.sort(key=lambda p: p.stat().st_size, reverse=True)
    if parse_many is not None and todo:
        for path, result in parse_many(todo):
            landed(path, result)
        return parsed
    workers = min(len(todo), os.cpu_count() or 1)
    if workers <= 1:
        for path in todo:
            landed(path, _parse_worker(path))
        return parsed
    # spawn, not fork: the parent may hold model threads (torch, llama.cpp) that a fork would copy
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_parse_worker, path): path for path in todo}
        for future in as_completed(futures):
            landed(futures[future], future.result())
    return parsed


def load_folder(
    folder: Path, source_urls: dict[str, str] | None = None, report: IngestReport | None = None,
    *, parse_cache: ParseCache | None = None, progress: bool = False, exclude: Collection[Path] = (),
    parse_many: ParseMany | None = None,
) -> tuple[list[Document], IngestReport]:
    """Load every supported file below ``folder`` (one document per PDF page) but those in ``exclude``.

    ``parse_cache`` reuses the page texts of unchanged PDFs; ``progress`` shows one step per file;
    ``parse_many`` parses the PDFs elsewhere (a Ray cluster) instead of in local processes.
    """
    folder = Path(folder)
    report = report or IngestReport()
    source_urls = source_urls or {}
    if not folder.is_dir():
        raise DatasetError(f"Document folder not found: {folder}", "pass an existing folder")
    documents: list[Document] = []
    files = list(iter_document_files(folder, exclude))
    bar = progress_bar(total=len(files), desc="parsing", unit="file", enabled=progress)
    pdfs = _parse_pdfs([p for p in files if p.suffix.lower() == ".pdf"], parse_cache, bar, parse_many)
    for path in files:
        rel = path.relative_to(folder).as_posix()
        suffix = path.suffix.lower()
        if suffix != ".pdf":
            bar.update(1)
        if suffix not in SUPPORTED_SUFFIXES:
            report.skip(rel, f"unsupported file type {suffix or '(none)'}")
            continue
        # doc_id is the document key (path relative to the folder: what relevance judgements use);
        # filename is what citations show
        base = {"filename": path.name, "doc_id": rel}
        if path.name in source_urls:
            base["source_url"] = source_urls[path.name]
        try:
            if suffix == ".pdf":
                pages = pdfs[path]
                if not isinstance(pages, list):
                    raise pages
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
    bar.close()
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
