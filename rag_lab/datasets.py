"""The dataset registry: resolve a name or path, load its documents, Q&A pairs, queries, qrels.

A dataset is a folder. ``dataset.json`` in it (optional) says what is what::

    {"kind": "folder", "documents": "pdfs", "qa": "qa.jsonl", "source_urls": {...}}
    {"kind": "beir", "corpus": "corpus.jsonl.gz", "queries": "queries.jsonl", "qrels": "qrels/test.tsv"}

Without it, a folder holding ``corpus.jsonl[.gz]`` is BEIR and any other folder is indexed whole.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from llama_index.core import Document

from rag_lab.errors import DatasetError
from rag_lab.ingest import IngestReport, load_beir_corpus, load_folder


@dataclass(frozen=True)
class QAPair:
    id: str
    question: str
    reference_answer: str
    source_file: str | None = None


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

    @property
    def corpus_files(self) -> list[Path]:
        """Every file whose content determines the index (for change detection)."""
        if self.corpus_file is not None:
            return [self.corpus_file]
        assert self.documents_dir is not None
        return sorted(p for p in self.documents_dir.rglob("*") if p.is_file())

    def load_documents(self) -> tuple[list[Document], IngestReport]:
        if self.kind == "beir":
            assert self.corpus_file is not None
            return load_beir_corpus(self.corpus_file)
        assert self.documents_dir is not None
        return load_folder(self.documents_dir, self.source_urls)

    def load_qa(self) -> list[QAPair]:
        if self.qa_file is None or not self.qa_file.exists():
            raise DatasetError(f"Dataset {self.name!r} has no Q&A file", "add qa.jsonl (id, question, reference_answer)")
        pairs = []
        for line_no, record in _read_jsonl(self.qa_file):
            try:
                pairs.append(QAPair(str(record["id"]), record["question"], record["reference_answer"],
                                    record.get("source_file")))
            except KeyError as exc:
                raise DatasetError(f"{self.qa_file}: line {line_no} lacks {exc}",
                                   "each line needs id, question and reference_answer") from None
        return pairs

    def load_queries(self) -> dict[str, str]:
        if self.queries_file is None or not self.queries_file.exists():
            raise DatasetError(f"Dataset {self.name!r} has no BEIR queries", "IR evaluation needs queries.jsonl and qrels")
        return {str(r["_id"]): r["text"] for _, r in _read_jsonl(self.queries_file)}

    def load_qrels(self) -> dict[str, dict[str, int]]:
        if self.qrels_file is None or not self.qrels_file.exists():
            raise DatasetError(f"Dataset {self.name!r} has no qrels", "IR evaluation needs qrels/test.tsv")
        qrels: dict[str, dict[str, int]] = {}
        with self.qrels_file.open(encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                qrels.setdefault(str(row["query-id"]), {})[str(row["corpus-id"])] = int(row["score"])
        return qrels


def _read_jsonl(path: Path):
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield line_no, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{path}: line {line_no} is not JSON ({exc.msg})", "fix or remove that line") from None


def _first_existing(root: Path, *names: str) -> Path | None:
    return next((root / n for n in names if (root / n).exists()), None)


def resolve_dataset(name_or_path: str | Path, datasets_dir: Path = Path("datasets")) -> Dataset:
    """A name under ``datasets_dir`` or a path to a folder."""
    candidate = Path(name_or_path)
    root = candidate if candidate.is_dir() else Path(datasets_dir) / str(name_or_path)
    if not root.is_dir():
        known = sorted(p.name for p in Path(datasets_dir).glob("*") if p.is_dir()) if Path(datasets_dir).is_dir() else []
        raise DatasetError(
            f"Unknown dataset {str(name_or_path)!r}: no folder {candidate}"
            + (f" nor {root}" if root != candidate else ""),
            f"use one of: {', '.join(known)}" if known else "pass a folder of documents",
        )
    root = root.resolve()
    spec_file = root / "dataset.json"
    spec = json.loads(spec_file.read_text(encoding="utf-8")) if spec_file.exists() else {}
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
