"""RAGAS's test-set generation against ``rag-lab synth`` on the same chunks, with the same local LLM.

    python benchmarks/synthetic_ragas_testset.py [--dataset texas_childcare_full] [--chunks 4]
        [--budget 900] [--out benchmarks/results/synthetic_ragas_testset.json]

The first ``--chunks`` chunks of ``synth``'s spread order (seed 0) go to RAGAS 0.4's
``TestsetGenerator.generate_with_chunks`` (its default transforms for pre-chunked text: headlines,
summaries, themes, entities, embeddings; then its query synthesizers), through LlamaIndex wrappers of
the configured LLM and embedding model, in a child process killed after ``--budget`` seconds. The same
chunks go to ``synth``'s generator (its cache makes a rerun free: ``seconds`` is the calls' own time).
Each output question is put through ``synth``'s checks. Written: time, failures, questions, checks.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


def _chunks(dataset_name: str, k: int):
    from rag_lab.config import load_settings
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.questions.sampling import corpus_chunks, spread_order

    settings = load_settings()
    dataset = resolve_dataset(dataset_name)
    return settings, dataset, spread_order(corpus_chunks(dataset, settings), 0)[:k]


def _ragas_child(dataset_name: str, k: int, queue) -> None:
    """RAGAS in a child process (killed at the budget): its questions or its error."""
    started = time.perf_counter()
    try:
        from langchain_core.documents import Document as LCDocument
        from ragas.embeddings import LlamaIndexEmbeddingsWrapper
        from ragas.llms import LlamaIndexLLMWrapper
        from ragas.run_config import RunConfig
        from ragas.testset import TestsetGenerator

        from rag_lab.models.embeddings import get_embed_model
        from rag_lab.models.llm.factory import get_llm

        settings, _, chunks = _chunks(dataset_name, k)
        generator = TestsetGenerator(LlamaIndexLLMWrapper(get_llm(settings)),
                                     LlamaIndexEmbeddingsWrapper(get_embed_model(settings)))
        docs = [LCDocument(page_content=c.text, metadata={"source_file": c.document, "chunk_id": c.chunk_id})
                for c in chunks]
        testset = generator.generate_with_chunks(docs, testset_size=k, run_config=RunConfig(timeout=600, max_workers=1),
                                                 raise_exceptions=False)
        rows = [{"question": s.eval_sample.user_input, "reference": s.eval_sample.reference,
                 "contexts": s.eval_sample.reference_contexts, "synthesizer": s.synthesizer_name}
                for s in testset.samples]
        queue.put({"ok": True, "rows": rows, "seconds": time.perf_counter() - started})
    except BaseException as exc:  # noqa: BLE001 - reported, not raised: this is what is measured
        queue.put({"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:500]}",
                   "trace": traceback.format_exc()[-1500:], "seconds": time.perf_counter() - started})


def run_ragas(dataset_name: str, k: int, budget: float) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_ragas_child, args=(dataset_name, k, queue))
    started = time.perf_counter()
    child.start()
    child.join(budget)
    if child.is_alive():
        child.kill()
        child.join()
        return {"ok": False, "error": f"not finished within the {budget:.0f} s budget",
                "seconds": time.perf_counter() - started}
    return queue.get() if not queue.empty() else {"ok": False, "error": f"exit code {child.exitcode}",
                                                  "seconds": time.perf_counter() - started}


def run_synth(dataset_name: str, k: int) -> dict:
    from rag_lab.models.llm.factory import get_llm
    from rag_lab.models.llm.identity import llm_identity
    from rag_lab.evaluate.questions.generate import generate

    settings, dataset, chunks = _chunks(dataset_name, k)
    from rag_lab.evaluate.questions.kinds import default_kinds
    from rag_lab.evaluate.questions.make import _human_questions

    llm = get_llm(settings)
    started = time.perf_counter()
    outcome = generate(dataset, settings, chunks, k, llm=llm, generator=llm_identity(llm),
                       kinds=default_kinds(_human_questions(dataset)), progress=False)
    return {"ok": True, "wall_seconds": time.perf_counter() - started,
            "llm_seconds": outcome.seconds + outcome.cached_seconds,
            "calls": outcome.calls, "cached": outcome.cached, "candidates": outcome.candidates,
            "made": outcome.made, "rejected": outcome.rejected,
            "rows": [{"question": r["question"], "reference": r["reference_answer"], "kind": r["kind"]}
                     for r in outcome.records]}


def checked(rows: list[dict], chunks) -> dict:
    """``synth``'s checks on RAGAS's questions (each against the chunks it names, else all given)."""
    from rag_lab.evaluate.questions.calibration import DEFAULT_MAX_OVERLAP
    from rag_lab.evaluate.questions.checks import check

    reasons: dict[str, int] = {}
    for row in rows:
        source = "\n".join(row.get("contexts") or [c.text for c in chunks])
        verdict = check(row["question"], row.get("reference") or "", source, max_overlap=DEFAULT_MAX_OVERLAP)
        reasons[verdict.reason or "accepted"] = reasons.get(verdict.reason or "accepted", 0) + 1
    return reasons


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="texas_childcare_full")
    parser.add_argument("--chunks", type=int, default=4)
    parser.add_argument("--budget", type=float, default=900.0, help="seconds RAGAS may take (killed after)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/synthetic_ragas_testset.json"))
    parser.add_argument("--synth-only", action="store_true",
                        help="keep the RAGAS part of --out as it is; run synth's side again (free when cached)")
    args = parser.parse_args()
    _, _, chunks = _chunks(args.dataset, args.chunks)
    ragas = (json.loads(args.out.read_text())["ragas"] if args.synth_only and args.out.exists()
             else run_ragas(args.dataset, args.chunks, args.budget))
    if ragas.get("ok"):
        ragas["checks"] = checked(ragas["rows"], chunks)
    ours = run_synth(args.dataset, args.chunks)
    ours["checks"] = {"accepted": ours["made"], **ours["rejected"]}
    result = {"dataset": args.dataset, "chunks": [c.chunk_id for c in chunks], "budget_s": args.budget,
              "ragas": ragas, "synth": ours}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk not in ("rows", "trace")} if isinstance(v, dict) else v
                      for k, v in result.items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
