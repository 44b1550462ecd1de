"""Does the LLM rerank help? Document-level ranking quality before and after it, per dataset.

    PYTHONPATH=. python benchmarks/rerank_quality.py [--datasets texas_childcare_full,scifact]
                                                    [--limit 20] [--mode fusion] [--top-n 7]

For ``--limit`` judged questions per dataset (spread over the relevant documents, as everywhere):
the mode retrieves 30 chunks (the answer engines' candidates); "before" is that order, "after" is
the configured LLM's rerank (the listwise JSON rerank for local models, LlamaIndex's otherwise)
of the top candidates, its ``top_n`` picks first and the rest in retrieval order — exactly what
``rag-lab ask --rerank`` hands the generator. Both orders are folded to documents (best chunk) and
scored with ranx; the difference is tested with the paired Fisher randomization test. A rerank
that fails (unparseable reply) keeps the retrieval order and is counted.
"""

from __future__ import annotations

import argparse
import statistics
import time

from rag_lab.answer.engine import DEFAULT_TOP_K
from rag_lab.answer.rerank import DEFAULT_TOP_N, make_reranker, rerank_nodes
from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.retrieval.ir import score_run
from rag_lab.evaluate.statistics.significance import paired_p_value
from rag_lab.index import build_index
from rag_lab.models.llm import get_llm
from rag_lab.retrieve import build_retriever
from rag_lab.retrieve.records import doc_key

METRICS = ("ndcg@10", "hit_rate@1", "hit_rate@3", "mrr@10")


def ranked_docs(nodes) -> dict[str, float]:
    """Chunks best first → ``{doc: score}`` with scores that keep that order (best chunk wins)."""
    docs: dict[str, float] = {}
    for node in nodes:
        docs.setdefault(doc_key(node.node.metadata), float(len(nodes) - len(docs)))
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="texas_childcare_full,scifact")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--mode", default="fusion")
    parser.add_argument("--top-n", type=int, default=DEFAULT_TOP_N)
    args = parser.parse_args()
    settings = load_settings()
    llm = get_llm(settings)
    reranker = make_reranker(llm, top_n=args.top_n)
    print(f"rerank: {type(reranker).__name__} with {settings.llm_provider}:{settings.llm_model_name}; "
          f"mode {args.mode}, {DEFAULT_TOP_K} candidates, top_n {args.top_n}")
    print(f"{'dataset':<22}{'n':>4}  {'metric':<12}{'before':>8}{'after':>8}{'Δ':>8}{'p (Fisher)':>12}")
    for name in [n.strip() for n in args.datasets.split(",") if n.strip()]:
        dataset = resolve_dataset(name, settings.datasets_dir)
        build_index(dataset, settings, progress=False)
        queries, qrels = dataset.judged_queries(args.limit)
        retriever = build_retriever(args.mode, settings, dataset, top_k=DEFAULT_TOP_K)
        before, after, seconds, failed = {}, {}, [], 0
        for n, (qid, text) in enumerate(queries.items(), start=1):
            nodes = retriever.retrieve(text)
            started = time.perf_counter()
            kept, info = rerank_nodes(nodes, text, reranker, args.top_n)
            seconds.append(time.perf_counter() - started)
            failed += info.status == "failed"
            chosen = {id(k.node) for k in kept}
            before[qid] = ranked_docs(nodes)
            after[qid] = ranked_docs(kept + [r for r in nodes if id(r.node) not in chosen])
            print(f"  {name}: {n}/{len(queries)} questions, last rerank {seconds[-1]:.1f}s ({info.status})", flush=True)
        means_b, per_b = score_run(before, qrels, METRICS)
        means_a, per_a = score_run(after, qrels, METRICS)
        for metric in METRICS:
            ids = sorted(per_b[metric])
            p = paired_p_value([per_b[metric][q] for q in ids], [per_a[metric][q] for q in ids], "fisher")
            print(f"{name:<22}{len(queries):>4}  {metric:<12}{means_b[metric]:>8.3f}{means_a[metric]:>8.3f}"
                  f"{means_a[metric] - means_b[metric]:>+8.3f}{p:>12.3f}")
        p95 = sorted(seconds)[min(len(seconds) - 1, int(0.95 * len(seconds)))]
        print(f"{name:<22}      rerank p50 {statistics.median(seconds):.1f} s, p95 {p95:.1f} s per question; "
              f"failed {failed}/{len(queries)}")


if __name__ == "__main__":
    main()
