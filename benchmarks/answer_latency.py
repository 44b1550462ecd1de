"""Seconds per answer, per mode, with the configured (default: offline) stack, and the share
of each stage: retrieval, rerank, generation.

    python benchmarks/answer_latency.py [--dataset texas_childcare] [--questions 3] [--modes ...]
                                        [--no-rerank]

Questions come from the dataset's qa.jsonl; every mode answers the same ones, interleaved, so
machine noise hits all modes alike. The agent reports its total only (its stages interleave).
"""

from __future__ import annotations

import argparse
import statistics

from rag_lab.answer.adapter import make_answerer
from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.index.store import close_all
from rag_lab.index import build_index
from rag_lab.models import get_embed_model
from rag_lab.models.llm import get_llm

STAGES = ("retrieve", "rerank", "generate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--modes", default="dense,bm25,fusion,hybrid,agent")
    parser.add_argument("--no-rerank", action="store_true")
    args = parser.parse_args()
    settings = load_settings()
    dataset = resolve_dataset(args.dataset, settings.datasets_dir)
    build_index(dataset, settings, progress=False)
    questions = [pair.question for pair in dataset.load_qa()[: args.questions]]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    answerers = {m: make_answerer(m, settings, dataset, rerank=not args.no_rerank) for m in modes}
    # Load the embedding model and the LLM before any timing, so no mode pays for the loads.
    get_embed_model(settings).get_query_embedding("warm up")
    get_llm(settings).complete("Say hi.")
    answers: dict[str, list] = {m: [] for m in modes}
    for question in questions:
        for mode, answerer in answerers.items():
            answers[mode].append(answerer.query(question))
            if mode == "agent" and hasattr(answerer, "reset"):
                answerer.reset()

    print(f"{dataset.name}: {len(questions)} questions, LLM {settings.llm_provider}:{settings.llm_model_name}, "
          f"rerank {'off' if args.no_rerank else 'on'}")
    print(f"{'mode':<8}{'p50 s':>9}" + "".join(f"{s:>11}" for s in STAGES) + f"{'tokens/ans':>12}")
    for mode, items in answers.items():
        p50 = statistics.median(a.response_time for a in items)
        total = sum(a.response_time for a in items) or 1.0
        shares = "".join(
            f"{100 * sum(a.timings.get(s, 0.0) for a in items) / total:>10.0f}%" if items[0].timings else f"{'—':>11}"
            for s in STAGES)
        tokens = statistics.mean(a.usage.get("total_tokens", 0) for a in items)
        print(f"{mode:<8}{p50:>9.1f}{shares}{tokens:>12.0f}")


if __name__ == "__main__":
    try:
        main()
    finally:
        close_all()  # local-mode Qdrant must close before interpreter shutdown
