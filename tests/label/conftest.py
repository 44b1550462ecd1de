"""A toy eval run folder: two modes, answers with contexts and a reference, judged faithfulness and
factual correctness scores (no model runs)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

MODES = ("bm25", "hybrid")


def write_toy_run(run: Path, questions: int = 30, seed: int = 1) -> Path:
    rng = random.Random(seed)
    run.mkdir(parents=True, exist_ok=True)
    (run / "manifest.json").write_text(json.dumps({"dataset": {"name": "toy"}, "config": {"modes": list(MODES)}}))
    for mode in MODES:
        (run / mode).mkdir(exist_ok=True)
        lines = []
        for i in range(questions):
            faithful = rng.random()
            lines.append(json.dumps({
                "id": f"toy#Q{i}", "mode": mode, "question": f"What does rule {i} say?",
                "answer": f"Rule {i} says the fee is ${i}.", "reference": f"The fee under rule {i} is ${i}.",
                "contexts": [{"filename": "rules.pdf", "page": i, "text": f"Rule {i}: the fee is ${i}."}],
                "scores": {"faithfulness": round(faithful, 6), "factual_correctness": round(rng.random(), 6),
                           "rouge_l": 0.5}}))
        (run / mode / "samples.jsonl").write_text("\n".join(lines) + "\n")
    return run


@pytest.fixture
def toy_run(tmp_path) -> Path:
    return write_toy_run(tmp_path / "run")
