"""`rag-lab demo`: the main job on the configured (by default fully offline) stack.

1. index both bundled datasets (idempotent; embeddings cached);
2. one sample search per available retrieval mode, with hybrid's explanation;
3. the IR table on SciFact beside the published anchors;
4. one sample question answered in every configured mode (engines and the agent).
"""

from __future__ import annotations

import json
from pathlib import Path

from rag_lab.cli.settings import get_settings



def add_demo(sub, common) -> None:
    p = sub.add_parser("demo", help="index the bundled datasets, search in every mode, IR table on SciFact")
    p.add_argument("--datasets", default="texas_childcare,scifact")
    p.add_argument("--ir-limit", type=int, default=None, help="evaluate only N SciFact queries")
    p.add_argument("--skip-ir", action="store_true")
    p.add_argument("--skip-ask", action="store_true")
    p.add_argument("--skip-reports", action="store_true", help="skip the mode comparison, ablation grid and HTML reports")
    p.add_argument("--report-datasets", default="texas_childcare_full,scifact",
                   help="datasets of the mode comparison + ablation grid + HTML reports step")
    p.add_argument("--answer-limit", type=int, default=3, help="questions answered per mode in the report step")
    common(p)
    p.set_defaults(handler=run_demo)


def _embedded(settings) -> str:
    return "Qdrant Edge, in-process" if settings.vector_backend == "edge" else "qdrant-client local mode"


def _banner(text: str) -> None:
    print(f"\n{'=' * 100}\n{text}\n{'=' * 100}")


def run_demo(args) -> int:
    from rag_lab.cli.render import render_ir_table, render_results
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.ir import SCIFACT_ANCHORS, evaluate_modes
    from rag_lab.index import build_index
    from rag_lab.retrieve import INDEX_MODES, build_retriever

    settings = get_settings()
    datasets = [resolve_dataset(n.strip(), settings.datasets_dir) for n in args.datasets.split(",") if n.strip()]
    _banner(f"1. Indexing ({settings.embed_provider} embeddings: {settings.embed_model_name}; "
            f"Qdrant: {'server ' + settings.qdrant_url if settings.qdrant_url else _embedded(settings)})")
    for dataset in datasets:
        print(build_index(dataset, settings).summary())

    _banner("2. One sample search per retrieval mode")
    modes = list(INDEX_MODES) + (["kendra"] if settings.kendra_index_id else [])
    for dataset in datasets:
        query = dataset.sample_queries[0] if dataset.sample_queries else "overview"
        for mode in modes:
            retriever = build_retriever(mode, settings, dataset, top_k=3, explain=(mode == "hybrid") or None)
            print(f"\n[{dataset.name} · {mode}] {query!r}")
            print(render_results(retriever.retrieve(query), explain=(mode == "hybrid")))
    if "kendra" not in modes:
        print("\n(kendra skipped: set KENDRA_INDEX_ID and AWS credentials to include it)")

    beir = [d for d in datasets if d.kind == "beir" and d.qrels_file is not None]
    if beir and not args.skip_ir:
        dataset = beir[0]
        _banner(f"3. IR evaluation on {dataset.name} (ranx; depth 100; RRF k=60, prefetch 100)")
        report = evaluate_modes(dataset, settings, list(INDEX_MODES), limit=args.ir_limit)
        print(render_ir_table(report.results, title=report.describe(),
                              anchors=SCIFACT_ANCHORS if dataset.name == "scifact" else None))
        out = Path("reports") / f"ir_{dataset.name}.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(report.to_json(), indent=2))
        print(f"\nwrote {out}")

    qa = [d for d in datasets if d.qa_file is not None and d.kind == "folder"]
    if qa and not args.skip_ask:
        _ask_every_mode(qa[0], settings, modes)
    if not args.skip_reports:
        from rag_lab.cli.demo_reports import run_reports

        _banner("5. Mode comparison, retrieval ablation grid (fusion k × prefetch × top-k) and HTML reports")
        run_reports(settings, [n.strip() for n in args.report_datasets.split(",") if n.strip()],
                    answer_limit=args.answer_limit)
    return 0


SAMPLE_QUESTION = "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"


def _ask_every_mode(dataset, settings, modes: list[str]) -> None:
    from rag_lab.answer.adapter import make_answerer

    local = settings.llm_provider == "local"
    # A small offline model cannot produce rerank choice lists (the rerank would fail and be
    # recorded as failed) and reads prompts at ~60 tokens/s: keep its prompt to 3 chunks.
    options = {"rerank": not local, "top_n": 3} if local else {}
    _banner(f"4. '{SAMPLE_QUESTION}' in every mode ({settings.llm_provider}: {settings.llm_model_name}"
            + ("; rerank off and 3 chunks for the small offline model" if local else "") + ")")
    for mode in [*modes, "agent"]:
        params = {} if mode == "agent" else options
        answer = make_answerer(mode, settings, dataset, **params).query(SAMPLE_QUESTION)
        sources = ", ".join(f"{s.doc} p.{s.page}" if s.page is not None else s.doc for s in answer.sources)
        text = " ".join(answer.answer.split())
        print(f"\n[{mode}] {answer.response_time:.1f}s, {answer.usage.get('total_tokens', 0)} tokens")
        print(f"  answer : {text[:400]}{'…' if len(text) > 400 else ''}")
        print(f"  sources: {sources or '—'}")
