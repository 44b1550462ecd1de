from __future__ import annotations

import json

import pytest

TOPICS = ["infant", "toddler", "preschool", "afterschool", "summer", "weekend"]


def _document(i: int, paragraphs: int) -> str:
    parts = []
    for p in range(paragraphs):
        topic = TOPICS[(i + p) % len(TOPICS)]
        parts.append(f"Section {p + 1}. The {topic} program of district{i} reimburses providers ${20 + i}.{p}0 "
                     f"per day in 202{p}. Families in the {topic} program of district{i} qualify when household income stays "
                     f"below {50 + i + p} percent of median income, and providers renew certificates annually before "
                     f"the deadline of month{p}. Inspectors of the {topic} program of district{i} visit facilities "
                     f"{p + 2} times yearly to review staffing ratios.")
    return "\n\n".join(parts)


@pytest.fixture
def corpus(tmp_path):
    """A folder dataset of 4 text documents (1–3 chunks each at 60 words a chunk) with a human qa.jsonl."""
    root = tmp_path / "corpus"
    root.mkdir()
    for i, paragraphs in enumerate((3, 1, 2, 3)):
        (root / f"guide{i}.txt").write_text(_document(i, paragraphs), encoding="utf-8")
    (root / "qa.jsonl").write_text(json.dumps({"id": "h1", "question": "What does district0 pay for infants?",
                                               "reference_answer": "$20.00", "source_file": "guide0.txt"}) + "\n")
    return root


@pytest.fixture
def small_settings(lab_settings, tmp_path):
    """Settings with chunks of 60 words (several per document) and a data folder of the test's own."""
    from rag_lab.config import load_settings

    return load_settings(data_dir=tmp_path / "data", datasets_dir=lab_settings.datasets_dir, chunk_words=60)
