"""The dataset registry: resolve a name or path, load its documents, Q&A pairs, queries, qrels.

A dataset is a folder. ``dataset.json`` in it (optional) says what is what::

    {"kind": "folder", "documents": "pdfs", "qa": "qa.jsonl", "source_urls": {...}}
    {"kind": "beir", "corpus": "corpus.jsonl.gz", "queries": "queries.jsonl", "qrels": "qrels/test.tsv"}

Without it, a folder holding ``corpus.jsonl[.gz]`` is BEIR and any other folder is indexed whole.
"""

from __future__ import annotations

import csv
from collections import Counter
import json
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from llama_index.core import Document

from rag_lab.errors import DatasetError, json_error_text
from rag_lab.ingest import IngestReport, load_beir_corpus, load_folder
from rag_lab.ingest.loaders import SUPPORTED_SUFFIXES, ParseMany, iter_document_files
from rag_lab.ingest.parse_cache import ParseCache


# The synthetic questions `rag-lab synth` writes beside a dataset's files (rag_lab.evaluate.questions), and their summary.
SYNTHETIC_QA, SYNTHETIC_SUMMARY = "qa.synthetic.jsonl", "qa.synthetic.summary.json"


@dataclass(frozen=True)
class QAPair:
    """One line of ``qa.jsonl``: ``question`` (required), ``id`` (default ``line-N``),
    ``reference_answer`` and ``source_file`` (a file name or a list of them) optional.

    ``source_files`` are document keys (:meth:`Dataset.document_key`: the path relative to the
    documents folder); ``unknown_sources`` are the names that match no document of the folder.
    A pair with unknown sources only is *unjudgeable*: it has no document-level metrics."""

    id: str
    question: str
    reference_answer: str | None = None
    source_files: tuple[str, ...] = ()
    unknown_sources: tuple[str, ...] = ()

    @property
    def unjudgeable(self) -> bool:
        return bool(self.unknown_sources) and not self.source_files

    @property
    def source_file(self) -> str | None:
        return self.source_files[0] if self.source_files else None


@dataclass(frozen=True)
class Dataset:
    name: str
    root: Path
    kind: str  # "folder" | "beir"
    documents_dir: Path | None = None
    corpus_file: Path | None = None
    qa_file: Path | None = None
    queries_file: Path | None = None
    qrels_file: Path | None = None
    source_urls: dict[str, str] = field(default_factory=dict)
    sample_queries: tuple[str, ...] = ()
    dev_split_file: Path | None = None  # the dev split's ids from another file than the folder's dev_split.txt
    # Where qa_file's questions come from: "human", "synthetic" or "file" (rag_lab.evaluate.questions.question_set)
    question_origin: str = "human"

    @property
    def corpus_files(self) -> list[Path]:
        """Every file whose content determines the index (for change detection): the documents
        :func:`load_folder` reads (supported, not hidden), never the questions or the dataset's
        own description, so editing ``qa.jsonl`` neither rebuilds the index nor misses the answer cache."""
        if self.corpus_file is not None:
            return [self.corpus_file]
        assert self.documents_dir is not None
        return [p for p in iter_document_files(self.documents_dir, self.own_files)
                if p.suffix.lower() in SUPPORTED_SUFFIXES]

    @property
    def own_files(self) -> list[Path]:
        """The dataset's own files — questions, description, dev split — never documents, even when
        they sit among them (a folder indexed whole)."""
        from rag_lab.splits import dev_split_path

        return [p for p in (self.qa_file, self.root / "qa.jsonl", self.root / SYNTHETIC_QA, self.root / SYNTHETIC_SUMMARY,
                            self.root / "dataset.json", dev_split_path(self.root)) if p is not None]

    def document_key(self, path: Path) -> str:
        """The one document key: the path relative to the documents folder (``sub/file.pdf``);
        chunks carry it as ``doc_id``, relevance judgements use it (BEIR: the corpus ``_id``)."""
        assert self.documents_dir is not None
        return Path(path).relative_to(self.documents_dir).as_posix()

    def load_documents(self, *, parse_cache: ParseCache | None = None, progress: bool = False,
                       parse_many: ParseMany | None = None) -> tuple[list[Document], IngestReport]:
        """The corpus as documents; ``parse_cache`` reuses unchanged PDFs' text, ``progress`` shows files,
        ``parse_many`` parses PDFs elsewhere (a Ray cluster)."""
        if self.kind == "beir":
            assert self.corpus_file is not None
            return load_beir_corpus(self.corpus_file)
        assert self.documents_dir is not None
        return load_folder(self.documents_dir, self.source_urls, parse_cache=parse_cache, progress=progress,
                           exclude=self.own_files, parse_many=parse_many)

    @property
    def dev_split(self) -> frozenset[str]:
        """Question ids of the declared dev split (``dev_split.txt``, or ``dev_split_file``; see :mod:`rag_lab.splits`)."""
        from rag_lab.splits import read_dev_split, read_id_file

        return read_id_file(self.dev_split_file) if self.dev_split_file else read_dev_split(self.root)

    @property
    def has_qa(self) -> bool:
        return self.qa_file is not None and self.qa_file.exists()

    @property
    def has_beir_queries(self) -> bool:
        return self.queries_file is not None and self.queries_file.exists()

    def load_qa(self) -> list[QAPair]:
        if not self.has_qa:
            raise DatasetError(f"Dataset {self.name!r} has no Q&A file",
                               "add qa.jsonl: one JSON object per line with question, and optionally id, "
                               f"reference_answer and source_file; or make synthetic ones: rag-lab synth {self.name}")
        pairs = []
        resolver = _SourceResolver(self) if self.kind == "folder" else None
        for line_no, record in _read_jsonl(self.qa_file):
            pair = _qa_pair(self.qa_file, line_no, record)
            if resolver is not None:
                pair = resolver.resolve(pair, line_no)
            pairs.append(pair)
        if resolver is not None:
            resolver.warn_unknown()
        duplicated = [qa_id for qa_id, n in Counter(p.id for p in pairs).items() if n > 1]
        if duplicated:
            raise DatasetError(f"{self.qa_file}: duplicate ids {sorted(duplicated)[:5]}", "give every line its own id")
        return pairs

    @property
    def _queries_from_qa(self) -> bool:
        """No BEIR queries file: the questions of qa.jsonl are the queries."""
        return not self.has_beir_queries and self.has_qa

    @property
    def _qrels_from_qa(self) -> bool:
        """No qrels file: the Q&A pairs' source files are the judgements."""
        return (self.qrels_file is None or not self.qrels_file.exists()) and self.has_qa

    def load_queries(self) -> dict[str, str]:
        """BEIR queries, or else the questions of a Q&A file whose pairs name their source files."""
        if self.has_beir_queries:
            queries = {}
            for line_no, record in _read_jsonl(self.queries_file):
                if not isinstance(record, dict) or "_id" not in record or not isinstance(record.get("text"), str):
                    raise DatasetError(f"{self.queries_file}: line {line_no} is not a BEIR query",
                                       'each line needs {"_id": "...", "text": "..."}')
                queries[str(record["_id"])] = record["text"]
            return queries
        if self._queries_from_qa:
            return {p.id: p.question for p in self._judged_pairs()}
        raise DatasetError(f"Dataset {self.name!r} has no queries",
                           "IR evaluation needs queries.jsonl + qrels (BEIR) or a qa.jsonl whose lines name "
                           "their source_file")

    def load_qrels(self) -> dict[str, dict[str, int]]:
        """BEIR qrels, or document-level judgements from the Q&A pairs' source files (grade 1)."""
        if self._qrels_from_qa:
            return {p.id: dict.fromkeys(p.source_files, 1) for p in self._judged_pairs()}
        if self.qrels_file is None or not self.qrels_file.exists():
            raise DatasetError(f"Dataset {self.name!r} has no qrels",
                               "IR evaluation needs qrels/test.tsv (BEIR) or a qa.jsonl with source_file")
        return _read_qrels(self.qrels_file)

    def judged_queries(self, limit: int | None = None,
                       split: str = "all") -> tuple[dict[str, str], dict[str, dict[str, int]]]:
        """Queries that have judgements and their qrels; ``split`` keeps the declared dev split's
        questions, the rest, or all (:func:`rag_lab.splits.select_split`); with ``limit``, a sample of
        those spread over the relevant documents (see :func:`rag_lab.splits.spread_by_source`), not the first lines
        of the file."""
        if self._queries_from_qa and self._qrels_from_qa:
            pairs = self._judged_pairs()  # one read of qa.jsonl for both
            queries, qrels = {p.id: p.question for p in pairs}, {p.id: dict.fromkeys(p.source_files, 1) for p in pairs}
        else:
            qrels = self.load_qrels()
            queries = {q: t for q, t in self.load_queries().items() if q in qrels}
        if split != "all":
            from rag_lab.splits import select_split

            queries = {q: queries[q] for q in select_split(list(queries), self.dev_split, split, self.name)}
        from rag_lab.splits import sample_judged

        return sample_judged(queries, qrels, limit)

    def unjudgeable_questions(self) -> list[str]:
        """Ids of the Q&A pairs whose ``source_file`` names no document of the folder: left out
        of the document-level metrics (a real 0 would be a judgement nobody made)."""
        return [p.id for p in self.load_qa() if p.unjudgeable] if self.kind == "folder" and self.has_qa else []

    def _judged_pairs(self) -> list[QAPair]:
        pairs = self.load_qa()
        judged = [p for p in pairs if p.source_files]
        if not judged:
            unknown = sorted({s for p in pairs for s in p.unknown_sources})
            raise DatasetError(f"{self.qa_file}: no line names a source_file"
                               + (f" that is a document of {self.documents_dir} (named: {', '.join(unknown[:5])})"
                                  if unknown else ""),
                               "document-level IR metrics need each question's source file(s), as a path "
                               "relative to the documents folder (or a base name, when unambiguous)")
        return judged


_WARNED_UNKNOWN: set[tuple[str, str]] = set()  # (qa file, source name): warned once per process


class _SourceResolver:
    """Q&A ``source_file`` names → document keys. A key (path relative to the documents folder)
    is taken as is; a base name is accepted when exactly one document has it; an ambiguous base
    name is an error naming the candidates; a name matching no document is collected (warned once)."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self.keys = {dataset.document_key(p) for p in dataset.corpus_files}
        self.by_base: dict[str, list[str]] = {}
        for key in sorted(self.keys):
            self.by_base.setdefault(key.rsplit("/", 1)[-1], []).append(key)
        self.unknown: dict[str, list[int]] = {}

    def key(self, name: str, line_no: int) -> str | None:
        text = name.strip().replace("\\", "/")
        while text.startswith("./"):
            text = text[2:]
        if text in self.keys:
            return text
        if "/" not in text:
            found = self.by_base.get(text, [])
            if len(found) > 1:
                raise DatasetError(
                    f"{self.dataset.qa_file}: line {line_no}: source_file {name!r} is ambiguous: "
                    f"{' and '.join(found)} both have that name",
                    f"write the path relative to {self.dataset.documents_dir}, e.g. \"{found[0]}\"")
            if found:
                return found[0]
        elif self.dataset.documents_dir != self.dataset.root:  # a path from the dataset folder (pdfs/x.pdf)
            try:
                inside = (self.dataset.root / text).resolve().relative_to(self.dataset.documents_dir.resolve())
            except ValueError:
                inside = None
            if inside is not None and inside.as_posix() in self.keys:
                return inside.as_posix()
        self.unknown.setdefault(name, []).append(line_no)
        return None

    def resolve(self, pair: QAPair, line_no: int) -> QAPair:
        if not pair.source_files:
            return pair
        keys, unknown = [], []
        for name in pair.source_files:
            key = self.key(name, line_no)
            if key is None:
                unknown.append(name)
            elif key not in keys:
                keys.append(key)
        return QAPair(pair.id, pair.question, pair.reference_answer, tuple(keys), tuple(unknown))

    def warn_unknown(self) -> None:
        from rag_lab.errors import RagLabWarning, warn_at_caller

        for name, lines in self.unknown.items():
            if (str(self.dataset.qa_file), name) in _WARNED_UNKNOWN:
                continue
            _WARNED_UNKNOWN.add((str(self.dataset.qa_file), name))
            where = f"line {lines[0]}" + (f" and {len(lines) - 1} more" if len(lines) > 1 else "")
            warn_at_caller(RagLabWarning(
                f"{self.dataset.qa_file}: {where}: source_file {name!r} names no document of "
                f"{self.dataset.documents_dir}; those questions are unjudgeable (left out of the "
                "document-level metrics) — fix the name (a path relative to the documents folder)"))


def _qa_pair(path: Path, line_no: int, record: object) -> QAPair:
    if not isinstance(record, dict) or not isinstance(record.get("question"), str) or not record["question"].strip():
        raise DatasetError(f"{path}: line {line_no} has no question", 'each line needs {"question": "..."}')
    sources = record.get("source_file", record.get("source_files")) or ()
    if isinstance(sources, str):
        sources = (sources,)
    if not isinstance(sources, (list, tuple)) or not all(isinstance(s, str) for s in sources):
        raise DatasetError(f"{path}: line {line_no}: source_file must be a file name or a list of them",
                           'e.g. "source_file": "guide.pdf"')
    reference = record.get("reference_answer")
    return QAPair(str(record.get("id", f"line-{line_no}")), record["question"].strip(),
                  reference if isinstance(reference, str) and reference.strip() else None, tuple(sources))


QRELS_COLUMNS = ("query-id", "corpus-id", "score")


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV (header ``query-id corpus-id score``); a bad row names its file and line."""
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = [c for c in QRELS_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise DatasetError(f"{path}: line 1 (header) lacks column(s) {', '.join(missing)}",
                               "the first line must be: query-id<TAB>corpus-id<TAB>score")
        for row in reader:
            line_no = reader.line_num
            try:
                qrels.setdefault(str(row["query-id"]), {})[str(row["corpus-id"])] = int(row["score"])
            except (TypeError, ValueError):
                raise DatasetError(f"{path}: line {line_no} is not 'query-id<TAB>corpus-id<TAB>score' with a "
                                   f"whole-number score (got {list(v for v in row.values() if v is not None)})",
                                   "fix or remove that line") from None
    return qrels


def _read_json_file(path: Path, what: str) -> dict:
    """A JSON object from ``path``; malformed JSON names the file, line and column."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: line {exc.lineno} column {exc.colno}: {exc.msg}",
                           f"fix the {what} (it must be one JSON object)") from None
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not UTF-8 text", f"save the {what} as UTF-8 JSON") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: line 1: expected a JSON object, got {type(data).__name__}",
                           f"the {what} must be one JSON object {{...}}")
    return data


def _read_jsonl(path: Path):
    """``(line number, JSON value)`` per non-blank line; bad JSON or bytes that are not UTF-8 name
    the file and line (read as bytes, so a decoding error knows its line)."""
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{path}: line {line_no} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                                   f"column {exc.start + 1})",
                                   "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)") from None
            if line.strip():
                try:
                    yield line_no, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{path}: line {line_no} is not JSON ({json_error_text(exc.msg)} at column {exc.colno})",
                                       "fix or remove that line") from None


def _first_existing(root: Path, *names: str) -> Path | None:
    return next((root / n for n in names if (root / n).exists()), None)


def with_dev_split_file(dataset: Dataset, path: str | Path | None) -> Dataset:
    """``dataset`` with the dev split read from ``path`` (``--dev-split FILE`` / ``dev_split=``); None leaves it."""
    return dataset if path is None else dataclasses.replace(dataset, dev_split_file=Path(path))


def _known_datasets(datasets_dir: Path) -> list[str]:
    return sorted(p.name for p in Path(datasets_dir).glob("*") if p.is_dir()) if Path(datasets_dir).is_dir() else []


def resolve_dataset(name_or_path: str | Path, datasets_dir: Path = Path("datasets")) -> Dataset:
    """A name under ``datasets_dir`` or a path to a folder."""
    if not isinstance(name_or_path, (str, Path)) or not str(name_or_path).strip():
        # Path("") is the working folder: an empty name would quietly mean the whole repository
        known = _known_datasets(datasets_dir)
        raise DatasetError("The dataset name is empty" if isinstance(name_or_path, str) else
                           f"The dataset must be a name or a folder path, got {name_or_path!r}",
                           f"use one of: {', '.join(known)}, or a folder of documents" if known else "pass a folder of documents")
    candidate = Path(name_or_path)
    root = candidate if candidate.is_dir() else Path(datasets_dir) / str(name_or_path)
    if not root.is_dir():
        known = _known_datasets(datasets_dir)
        raise DatasetError(
            f"Unknown dataset {str(name_or_path)!r}: no folder {candidate}"
            + (f" nor {root}" if root != candidate else ""),
            f"use one of: {', '.join(known)}" if known else "pass a folder of documents",
        )
    root = root.resolve()
    spec_file = root / "dataset.json"
    spec = _read_json_file(spec_file, "dataset description") if spec_file.exists() else {}
    name = spec.get("name") or root.name
    corpus = _first_existing(root, spec["corpus"]) if "corpus" in spec else _first_existing(root, "corpus.jsonl.gz", "corpus.jsonl")
    kind = spec.get("kind") or ("beir" if corpus else "folder")
    samples = tuple(spec.get("sample_queries", ()))
    if kind == "beir":
        if corpus is None:
            raise DatasetError(f"BEIR dataset {name!r} has no corpus file", "add corpus.jsonl or corpus.jsonl.gz")
        return Dataset(name, root, "beir", corpus_file=corpus,
                       queries_file=_first_existing(root, spec.get("queries", "queries.jsonl")),
                       qrels_file=_first_existing(root, spec.get("qrels", "qrels/test.tsv")),
                       qa_file=_first_existing(root, spec.get("qa", "qa.jsonl")), sample_queries=samples)
    documents_dir = root / spec["documents"] if "documents" in spec else root
    if not documents_dir.is_dir():
        raise DatasetError(f"Dataset {name!r}: documents folder {documents_dir} is missing", "fix dataset.json")
    if not any(documents_dir.rglob("*")):
        raise DatasetError(f"Dataset {name!r}: {documents_dir} is empty", "add .pdf, .txt, .md or .rst files")
    return Dataset(name, root, "folder", documents_dir=documents_dir,
                   qa_file=_first_existing(root, spec.get("qa", "qa.jsonl")),
                   source_urls=dict(spec.get("source_urls", {})), sample_queries=samples)
