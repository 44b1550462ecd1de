"""Which questions a command scores with: ``--questions human|synthetic|FILE`` (``questions=``).

The one place every command that reads questions (``ir``, ``eval``, ``ablate``, ``tune``, ``split``,
the API, the notebooks) routes its dataset through. ``human`` is the dataset's own questions
(``qa.jsonl``, or a BEIR dataset's queries and qrels); ``synthetic`` is its ``qa.synthetic.jsonl``
(``rag-lab synth``); a FILE is any ``qa.jsonl``-shaped file. Without a choice: human when the dataset
has them, otherwise its synthetic questions, with a one-line notice.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_lab.datasets import Dataset
from rag_lab.errors import DatasetError
from rag_lab.evaluate.questions.records import ORIGIN, SYNTHETIC_FILE

HUMAN, SYNTHETIC = "human", "synthetic"


def has_human_questions(dataset: Dataset) -> bool:
    return dataset.question_origin == HUMAN and (dataset.has_qa or dataset.has_beir_queries)


def with_questions(dataset: Dataset, questions: str | Path | None = None, *, notice=None) -> Dataset:
    """``dataset`` reading its questions from the chosen set (see the module doc). ``notice`` gets
    the one line said when the default falls back to synthetic questions (default: stderr)."""
    if questions is None or str(questions).strip() == "":
        if has_human_questions(dataset) or not (dataset.root / SYNTHETIC_FILE).exists():
            return dataset  # human, or nothing to fall back on: the usual "no questions" error says what to do
        (notice or _stderr)(f"{dataset.name}: no human questions (qa.jsonl); using the synthetic ones in "
                            f"{dataset.root / SYNTHETIC_FILE} (--questions FILE chooses others)")
        return _reading(dataset, dataset.root / SYNTHETIC_FILE, SYNTHETIC)
    choice = str(questions).strip()
    if choice == HUMAN:
        if not (dataset.has_qa or dataset.has_beir_queries):
            raise DatasetError(f"Dataset {dataset.name!r} has no human questions (no qa.jsonl)",
                               f"use --questions synthetic (after rag-lab synth {dataset.name}) or --questions FILE")
        return dataset
    if choice == SYNTHETIC:
        path = dataset.root / SYNTHETIC_FILE
        if not path.exists():
            raise DatasetError(f"Dataset {dataset.name!r} has no synthetic questions ({path} is missing)",
                               f"make them first: rag-lab synth {dataset.name}")
        return _reading(dataset, path, SYNTHETIC)
    path = Path(choice)
    if not path.is_file():
        raise DatasetError(f"--questions {choice}: no such file (and not human or synthetic)",
                           "give human, synthetic, or the path of a file of qa.jsonl lines")
    return _reading(dataset, path.resolve(), file_origin(path))


def file_origin(path: Path) -> str:
    """``synthetic`` when every line of ``path`` says so (``origin``), else ``file``."""
    origins = set()
    with Path(path).open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.strip():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    return "file"  # the loader names the bad line
                origins.add(record.get("origin") if isinstance(record, dict) else None)
    return SYNTHETIC if origins == {ORIGIN} else "file"


def _reading(dataset: Dataset, path: Path, origin: str) -> Dataset:
    """``dataset`` whose questions (and, for BEIR, judgements) are ``path``'s lines."""
    return dataclasses.replace(dataset, qa_file=path, question_origin=origin, queries_file=None, qrels_file=None)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


@dataclass(frozen=True)
class QuestionSet:
    """What a run manifest records of the questions a run scored with."""

    origin: str
    path: str | None
    sha256: str | None
    count: int

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def label(self) -> str:
        """``human (236 questions)``, ``synthetic (qa.synthetic.jsonl, 100 questions)``."""
        where = f"{Path(self.path).name}, " if self.path and self.origin != HUMAN else ""
        return f"{self.origin} ({where}{self.count} questions)"


def question_set(dataset: Dataset) -> QuestionSet:
    """The question set ``dataset`` reads: origin, file, its sha256 and the number of questions."""
    path = dataset.qa_file if dataset.qa_file is not None and dataset.qa_file.exists() else dataset.queries_file
    if path is None or not Path(path).exists():
        return QuestionSet(dataset.question_origin, None, None, 0)
    data = Path(path).read_bytes()
    try:
        count = len(dataset.judged_queries()[0])  # the questions a run can score (a BEIR file has unjudged ones)
    except DatasetError:
        count = sum(1 for line in data.splitlines() if line.strip())
    return QuestionSet(dataset.question_origin, str(path), hashlib.sha256(data).hexdigest(), count)


def human_questions_of(dataset: Dataset) -> Dataset | None:
    """The same dataset reading its human questions (its dev split file kept), or None without any."""
    from rag_lab.datasets import resolve_dataset

    human = dataclasses.replace(resolve_dataset(dataset.root), dev_split_file=dataset.dev_split_file)
    return human if human.has_qa or human.has_beir_queries else None


def refuse_second_split(dataset: Dataset) -> None:
    """``split`` of generated questions where human ones exist is refused: the dataset's dev split
    is its human questions' (``tune`` chooses on every synthetic question and confirms on the human
    ones, so generated questions need no split of their own)."""
    if dataset.question_origin != HUMAN and human_questions_of(dataset) is not None:
        raise DatasetError(f"Dataset {dataset.name!r} has human questions: its dev split (dev_split.txt) is theirs, "
                           f"not the {dataset.question_origin} questions'",
                           "split the human questions (drop --questions); rag-lab tune --questions synthetic "
                           "chooses on every synthetic question and confirms on the human ones")
