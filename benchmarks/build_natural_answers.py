"""Build the natural-answer validation set of the judge: answers the lab's own generators wrote to
``texas_childcare_full`` questions, each with the contexts it was given (labelling rules:
docs/judge-labels.md).

    python benchmarks/build_natural_answers.py --split                   # declare the tune/test split (once)
    python benchmarks/build_natural_answers.py --questions 84            # answers, resumable
    python benchmarks/build_natural_answers.py --questions 1 --every     # every generator once: a try

The split is by question and written before any answer is judged: ``split.json`` lists every
eligible question (those the perturbation set ``judge_validation.jsonl`` never used: the judge
was designed on those) in a tune half and a test half, seeded; it is never rewritten (``--split``
refuses to change it). Answers go to ``answers.jsonl``, one line per (question, generator),
appended as each is written: a stopped run resumes where it stopped. Labels are not written here:
they are read and recorded by hand in ``labels.jsonl`` before any judge score of the answer is seen.

Generators (``GENERATORS``): the local 1.5B model with and without line compression, the 0.5B and
SmolLM2 models, the agent, and ``wrong-contexts``: the 1.5B engine given the contexts retrieved for
another question (a retrieval failure, as runs have them: the model refuses — the engine's refusals —
or answers from the wrong contexts). The models come from the lab's catalog (``rag-lab models`` fetches them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATASET = "texas_childcare_full"
OUT_DIR = Path("datasets") / DATASET / "natural_answers"
SEED = "natural-answers-1"
MODE = "hybrid"  # the retrieval every generator answers from (the lab's dense + BM25 engine)
# name → settings changes (on top of the local provider) and the answer mode
GENERATORS: dict[str, dict[str, Any]] = {
    "qwen1.5b": {"settings": {"compress": "on"}},  # the default: evidence-first for the local model
    "qwen1.5b-free": {"settings": {"compress": "on", "answer_style": "free"}},
    "qwen1.5b-whole-chunks": {"settings": {"compress": "off", "answer_style": "free"}},
    "qwen0.5b": {"settings": {"llm_model": "qwen-0.5b", "compress": "on"}},
    "smollm2": {"settings": {"llm_model": "smollm2", "compress": "on"}},
    "agent": {"settings": {}, "mode": "agent"},
    "wrong-contexts": {"settings": {"compress": "on"}, "other_question": True},
}
# Every question gets the default generator and two others in turn, so every question has three
# answers to compare. The small models and the retrieval failure come up most often: on 2 cores they
# take 7-20 s an answer, the agent about 35 s, a free-form 1.5B answer 50 s and one from whole chunks
# 80 s or more (``qwen1.5b-whole-chunks`` is answered only with ``--every``).
ALWAYS = "qwen1.5b"
ROTATING = ["qwen0.5b", "wrong-contexts", "smollm2", "agent", "qwen0.5b", "smollm2", "wrong-contexts",
            "qwen1.5b-free", "smollm2", "qwen0.5b"]
PER_QUESTION = 3


def generators_for(position: int, allowed: list[str]) -> list[str]:
    """The generators of the question at ``position`` of the split's order: ``ALWAYS`` and the next
    ``PER_QUESTION - 1`` of ``ROTATING`` (only those in ``allowed``)."""
    turn = [ROTATING[(position * (PER_QUESTION - 1) + i) % len(ROTATING)] for i in range(PER_QUESTION - 1)]
    return [g for g in [ALWAYS, *turn] if g in allowed]


def split_key(question_id: str) -> str:
    return hashlib.sha256(f"{SEED}:{question_id}".encode()).hexdigest()


def declare_split(pairs: list[dict], used: set[str]) -> dict[str, Any]:
    """Every question the perturbation set did not use, ordered by a seeded hash, alternately in the
    tune and test halves (so any first N of ``order`` is balanced between them)."""
    order = sorted((p["id"] for p in pairs if p["id"] not in used), key=split_key)
    return {"rule": f"questions of qa.jsonl not in judge_validation.jsonl, ordered by sha256('{SEED}:' + id); "
                    "even positions tune, odd positions test",
            "order": order, "tune": order[0::2], "test": order[1::2]}


def other_question_retriever(inner: Any, other_question: str) -> Any:
    """A retriever that retrieves for another question: the contexts a retrieval failure gives."""
    from llama_index.core.retrievers import BaseRetriever

    class OtherQuestionRetriever(BaseRetriever):
        def _retrieve(self, query_bundle: Any) -> list:
            return inner.retrieve(other_question)

    return OtherQuestionRetriever()


def answer_one(generator: str, question: str, other_question: str, settings: Any, dataset: Any) -> dict[str, Any]:
    """One answer of ``generator`` with the contexts it was given."""
    from rag_lab.answer.adapter import make_answerer

    spec = GENERATORS[generator]
    own = settings.model_copy(update=spec["settings"])
    mode = spec.get("mode", MODE)
    if spec.get("other_question"):
        from rag_lab.answer.engine import DEFAULT_TOP_K
        from rag_lab.retrieve import build_retriever

        inner = build_retriever(mode, own, dataset, top_k=DEFAULT_TOP_K)
        answerer = make_answerer(mode, own, dataset, retriever=other_question_retriever(inner, other_question))
    else:
        answerer = make_answerer(mode, own, dataset)  # the CLI's defaults (rerank off for the local model)
    started = time.perf_counter()
    answer = answerer.query(question)
    return {"answer": answer.answer, "response_type": answer.response_type, "mode": mode,
            "settings": spec["settings"], "seconds": round(time.perf_counter() - started, 1),
            "contexts": [{"text": c.text, "filename": c.filename, "page": c.page} for c in answer.chunks],
            "evidence": [{"doc": e.get("doc"), "text": e.get("text")} for e in answer.evidence],
            **({"contexts_of": other_question} if spec.get("other_question") else {})}


def done_ids(path: Path) -> set[str]:
    if not path.is_file():
        return set()
    return {json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", action="store_true", help="write split.json (refused when it exists and differs)")
    parser.add_argument("--questions", type=int, default=80, help="the first N questions of the split's order")
    parser.add_argument("--generators", default=",".join(GENERATORS), help="comma-separated: " + ", ".join(GENERATORS))
    parser.add_argument("--every", action="store_true", help="every generator on every question (not in turn)")
    args = parser.parse_args()
    unknown = sorted(set(args.generators.split(",")) - set(GENERATORS))
    if unknown:
        print(f"error: unknown generator(s) {', '.join(unknown)}: use {', '.join(GENERATORS)}", file=sys.stderr)
        return 2
    root = Path("datasets") / DATASET
    pairs = [json.loads(line) for line in (root / "qa.jsonl").read_text().splitlines() if line.strip()]
    used = {json.loads(line)["id"] for line in (root / "judge_validation.jsonl").read_text().splitlines() if line.strip()}
    split_file = OUT_DIR / "split.json"
    split = declare_split(pairs, used)
    if args.split:
        if split_file.is_file() and json.loads(split_file.read_text()) != split:
            print(f"error: {split_file} exists and differs: the split is declared once, never rewritten", file=sys.stderr)
            return 2
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        split_file.write_text(json.dumps(split, indent=1) + "\n", encoding="utf-8")
        print(f"{split_file}: {len(split['tune'])} tune and {len(split['test'])} test questions")
        return 0
    if not split_file.is_file():
        print(f"error: no {split_file}: declare the split first (--split)", file=sys.stderr)
        return 2
    split = json.loads(split_file.read_text())
    from rag_lab.config import get_settings
    from rag_lab.datasets import resolve_dataset

    settings = get_settings().model_copy(update={"llm_provider": "local"})
    dataset = resolve_dataset(DATASET)
    by_id = {p["id"]: p for p in pairs}
    half = {qid: "tune" for qid in split["tune"]} | {qid: "test" for qid in split["test"]}
    chosen = split["order"][:args.questions]
    out = OUT_DIR / "answers.jsonl"
    done = done_ids(out)
    for n, qid in enumerate(chosen):
        pair = by_id[qid]
        # another question of another document: its contexts miss this question
        other = next(by_id[o] for o in split["order"][n + 1:] + split["order"]
                     if by_id[o]["source_file"] != pair["source_file"])
        answered = sum(item.startswith(f"{qid}::") for item in done)
        if answered >= PER_QUESTION and not args.every:
            continue  # answered already (under an earlier turn of the generators)
        for generator in generators_for(n, args.generators.split(",")) if not args.every else args.generators.split(","):
            item_id = f"{qid}::{generator}"
            if item_id in done:
                continue
            record = {"id": item_id, "question_id": qid, "split": half[qid], "generator": generator,
                      "question": pair["question"], "reference": pair["reference_answer"],
                      "source_file": pair["source_file"]}
            record |= answer_one(generator, pair["question"], other["question"], settings, dataset)
            with out.open("a", encoding="utf-8") as f:  # one line per answer: the checkpoint
                f.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
            print(f"{item_id}: {record['seconds']} s, {len(record['contexts'])} contexts: {record['answer'][:100]!r}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
