"""`rag-lab eval` killed with SIGKILL mid-run, then resumed: every sample exactly once, and the
same answers and scores as an uninterrupted run. Real CLI process, real local model (SmolLM2
pinned, 16-token answers from 4 lines of one chunk), bm25 on texas_childcare, 4 questions."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMIT = 4


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
            if line.endswith("\n")]


def _eval(env, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "rag_lab.cli.main", "eval", "texas_childcare", "--modes", "bm25",
            "--limit", str(LIMIT), "--no-rerank", "--top-n", "1", "--out", str(out), *extra]


def test_sigkill_then_resume_gives_every_sample_once_with_the_same_scores(lab_settings, texas_index, tmp_path):
    data = tmp_path / "data"
    (data / "cache").mkdir(parents=True)
    for name in ("embeddings.sqlite", "parsed.sqlite"):  # the index rebuilds from caches in seconds
        if (lab_settings.cache_dir / name).exists():
            shutil.copy(lab_settings.cache_dir / name, data / "cache" / name)
    env = {**os.environ, "RAG_LAB_DATA_DIR": str(data), "RAG_LAB_DATASETS_DIR": str(REPO / "datasets"),
           "RAG_LAB_LLM_PROVIDER": "local", "RAG_LAB_LLM_MODEL": "SmolLM2-135M-Instruct.Q4_1",
           "RAG_LAB_LLM_MAX_TOKENS": "16",
           # one chunk cut to its 4 lines nearest the question: the model reads ~100 tokens per answer
           # (seconds, not minutes). The session's chunking, so the index is rebuilt from the copied
           # caches; 40-word chunks (as before) had every chunk embedded again in the first process.
           "RAG_LAB_COMPRESS": "on", "RAG_LAB_COMPRESS_LINES": "4",
           "HF_HUB_OFFLINE": "1", "RAG_LAB_PROGRESS_INTERVAL": "0"}
    killed = tmp_path / "runs" / "killed"
    samples = killed / "bm25" / "samples.jsonl"

    proc = subprocess.Popen(_eval(env, killed), cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while len(_lines(samples)) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, f"eval ended before it could be killed: {proc.stderr.read()[-2000:]}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    done_before = len(_lines(samples))
    assert 2 <= done_before < LIMIT

    resumed = subprocess.run(_eval(env, killed, "--resume"), cwd=REPO, env=env, capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    records = _lines(samples)
    ids = [r["id"] for r in records]
    assert len(ids) == LIMIT and len(set(ids)) == LIMIT  # every sample exactly once
    assert all(r["error"] is None for r in records)

    whole = tmp_path / "runs" / "whole"
    straight = subprocess.run(_eval(env, whole), cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert straight.returncode == 0, straight.stderr[-2000:]
    reference = {r["id"]: r for r in _lines(whole / "bm25" / "samples.jsonl")}
    assert set(reference) == set(ids)
    for record in records:
        assert record["answer"] == reference[record["id"]]["answer"]
        assert record["scores"] == reference[record["id"]]["scores"]
    assert "rouge_l" in straight.stdout and "key_fact_recall" in straight.stdout
