"""`rag-lab split DATASET` writes the dev split of a dataset given by name or by folder path, and the
old `python -m rag_lab.splits` says where the command went instead of ending in a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rag_lab.splits import read_dev_split

REPO = Path(__file__).resolve().parents[2]


def _corpus(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    for name in ("a.txt", "b.txt"):
        (root / "docs" / name).write_text(f"{name} holds facts.\n", encoding="utf-8")
    lines = [{"id": f"q{i}", "question": f"question {i}?", "source_file": "a.txt" if i % 2 else "b.txt"}
             for i in range(1, 10)]
    (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    (root / "dataset.json").write_text(json.dumps({"documents": "docs"}), encoding="utf-8")
    return root


def test_split_by_folder_path_and_by_name(lab_cli, tmp_path, monkeypatch):
    folder = _corpus(tmp_path / "corpora" / "mycorpus")
    code, out, err = lab_cli("split", str(folder), "--seed", "3")
    assert code == 0, err
    by_path = read_dev_split(folder)
    assert len(by_path) == 3 and f"{folder / 'dev_split.txt'}: 3 of 9 questions" in out
    assert "Made by: rag-lab split" in (folder / "dev_split.txt").read_text(encoding="utf-8")
    (folder / "dev_split.txt").unlink()
    monkeypatch.setenv("RAG_LAB_DATASETS_DIR", str(tmp_path / "corpora"))
    from rag_lab.config import get_settings

    get_settings.cache_clear()
    code, _, err = lab_cli("split", "mycorpus", "--seed", "3")
    assert code == 0, err
    assert read_dev_split(folder) == by_path  # the same draw: seeded


def test_an_unknown_dataset_is_one_line_not_a_traceback(lab_cli):
    code, _, err = lab_cli("split", "no-such-corpus")
    assert code == 2 and err.startswith("error: Unknown dataset 'no-such-corpus'") and "Traceback" not in err


def test_the_old_module_entry_point_names_the_command():
    done = subprocess.run([sys.executable, "-m", "rag_lab.splits", "mycorpus"], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert done.returncode == 1 and "rag-lab split DATASET" in done.stderr and "Traceback" not in done.stderr
