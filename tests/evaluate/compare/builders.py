"""Run folders written as `rag-lab eval` writes them (manifest.json, <mode>/samples.jsonl), with chosen scores."""

from __future__ import annotations

import copy
import json
from pathlib import Path

BASE_MANIFEST = {
    "created_at": "2026-12-01T10:00:00+00:00",
    "dataset": {"name": "texas_childcare", "kind": "folder", "root": "/data/texas_childcare", "hash": "abc"},
    "config": {"modes": ["bm25", "hybrid"], "limit": None, "split": "all", "rerank": False, "judge": None,
               "params": {}, "conversations": False, "questions": 0, "metrics": None, "context_lines": 12,
               "prompt_version": "p1", "index_fingerprint": "f1"},
    "settings": {"data_dir": "/x", "chunk_words": 500, "chunk_overlap_words": 0, "answer_style": "auto",
                 "embed_model": None, "llm_temperature": 0.0, "judge_numbers": "code"},
    "models": {"llm": "local:qwen", "agent_llm": None, "embedding": "local:minilm", "judge": None},
    "packages": {"rag-lab": "0.1.0"},
    "git_commit": "c1",
    "question_set": {"origin": "human", "path": "/data/texas_childcare/qa.jsonl", "sha256": "q1", "count": 44},
}


def manifest(**changes) -> dict:
    """The base manifest with dotted-path changes: ``manifest(**{"models.embedding": "local:bge"})``."""
    out = copy.deepcopy(BASE_MANIFEST)
    for path, value in changes.items():
        *parents, leaf = path.split(".")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return out


def record(qid: str, mode: str, scores: dict, answer: str = "", source: str = "a.pdf") -> dict:
    return {"id": qid, "mode": mode, "question": f"question {qid}?", "answer": answer or f"answer to {qid} [Doc 1]",
            "error": None, "scores": scores, "score_errors": {},
            "contexts": [{"rank": 1, "doc_id": source, "filename": source, "page": 2, "text": f"text of {source}"}]}


def write_run(folder: Path, scores: dict[str, dict[str, dict[str, float]]], meta: dict | None = None,
              answers: dict[str, str] | None = None) -> Path:
    """``scores[mode][metric][qid]`` → a run folder; ``meta``: its manifest (default the base one)."""
    folder = Path(folder)
    meta = copy.deepcopy(meta or BASE_MANIFEST)
    meta["config"]["modes"] = list(scores)
    for mode, metrics in scores.items():
        qids = list(dict.fromkeys(q for values in metrics.values() for q in values))
        meta["config"]["questions"] = len(qids)
        (folder / mode).mkdir(parents=True, exist_ok=True)
        lines = [record(q, mode, {m: values[q] for m, values in metrics.items() if q in values},
                        answer=(answers or {}).get(q, ""), source=f"{mode}-{q}.pdf") for q in qids]
        (folder / mode / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps(meta), encoding="utf-8")
    return folder


def scores(n: int, value=lambda i: 0.8, modes=("bm25", "hybrid"), metrics=("ndcg@10", "rouge_l")):
    """``{mode: {metric: {qid: value(i)}}}`` for n questions q0…q{n-1}."""
    return {mode: {metric: {f"q{i}": float(value(i)) for i in range(n)} for metric in metrics} for mode in modes}
