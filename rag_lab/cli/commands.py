"""Sub-commands. Each ``add_*`` registers a parser whose handler calls into the library."""

from __future__ import annotations

import json
import sys

from rag_lab.config import get_settings


def _dataset(name: str):
    from rag_lab.datasets import resolve_dataset

    return resolve_dataset(name, get_settings().datasets_dir)


def add_index(sub, common) -> None:
    p = sub.add_parser("index", help="build or refresh a dataset's index (idempotent)")
    p.add_argument("dataset", help="a name under datasets/ or a folder path")
    p.add_argument("--force", action="store_true", help="rebuild even if nothing changed (embeddings still reused)")
    common(p)
    p.set_defaults(handler=run_index)


def run_index(args) -> int:
    from rag_lab.index import build_index

    settings = get_settings()
    result = build_index(_dataset(args.dataset), settings, force=args.force, progress=sys.stderr.isatty() or True)
    print(result.summary())
    for skipped in result.manifest.skipped:
        print(f"  skipped {skipped['path']}: {skipped['reason']}")
    return 0


def add_retrieval_options(p) -> None:
    p.add_argument("--top-k", type=int, default=None, help="results to return (default 5)")
    p.add_argument("--fusion-k", type=int, default=None, help="RRF k, ranks from 1 (default 60)")
    p.add_argument("--prefetch", type=int, default=None, help="candidates per leg for fusion/hybrid (default 100)")
    p.add_argument("--dense-weight", type=float, default=None)
    p.add_argument("--sparse-weight", type=float, default=None)


def retrieval_params(args, explain: bool = False) -> dict:
    return {
        "top_k": args.top_k, "rrf_k": args.fusion_k, "prefetch": args.prefetch,
        "dense_weight": args.dense_weight, "sparse_weight": args.sparse_weight, "explain": explain or None,
    }


def add_search(sub, common) -> None:
    from rag_lab.retrieve import ALL_MODES

    p = sub.add_parser("search", help="ranked chunks for a query")
    p.add_argument("dataset")
    p.add_argument("query")
    p.add_argument("--mode", choices=ALL_MODES, default="hybrid")
    add_retrieval_options(p)
    p.add_argument("--explain", action="store_true", help="show each leg's rank, score and RRF term (fusion, hybrid)")
    p.add_argument("--json", action="store_true", help="print JSON")
    common(p)
    p.set_defaults(handler=run_search)


def run_search(args) -> int:
    from rag_lab.cli.render import render_results
    from rag_lab.retrieve.records import results_json
    from rag_lab.retrieve import build_retriever

    settings = get_settings()
    dataset = _dataset(args.dataset) if args.mode != "kendra" else None
    params = retrieval_params(args, explain=args.explain)
    params["top_k"] = 5 if params["top_k"] is None else params["top_k"]  # --top-k 0 is an error, not 5
    retriever = build_retriever(args.mode, settings, dataset, **params)
    results = retriever.retrieve(args.query)
    if args.json:
        print(json.dumps(results_json(results, include_explanation=args.explain), indent=2, ensure_ascii=False))
    else:
        print(render_results(results, explain=args.explain))
    return 0


def add_ir(sub, common) -> None:
    p = sub.add_parser("ir", help="IR metrics (ranx) of retrieval modes on a BEIR dataset")
    p.add_argument("dataset")
    p.add_argument("--modes", default="dense,bm25,fusion,hybrid", help="comma-separated modes")
    p.add_argument("--fusion-k", type=int, default=None, help="RRF k, ranks from 1 (default 60)")
    p.add_argument("--prefetch", type=int, default=None, help="candidates per leg (default 100)")
    p.add_argument("--dense-weight", type=float, default=None)
    p.add_argument("--sparse-weight", type=float, default=None)
    p.add_argument("--limit", type=int, default=None, help="only the first N queries")
    p.add_argument("--no-resume", action="store_true", help="ignore checkpointed runs")
    p.add_argument("--json", metavar="FILE", default=None, help="also write the table as JSON")
    common(p)
    p.set_defaults(handler=run_ir)


def parse_modes(text: str) -> list[str]:
    from rag_lab.errors import ConfigError
    from rag_lab.retrieve import INDEX_MODES

    modes = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in modes if m not in INDEX_MODES]
    if unknown or not modes:
        raise ConfigError(f"Unknown or missing mode(s) for IR evaluation: {', '.join(unknown) or '(none)'}",
                          f"choose from {', '.join(INDEX_MODES)}")
    return modes


def run_ir(args) -> int:
    from rag_lab.cli.render import render_ir_table
    from rag_lab.evaluate.ir import evaluate_modes
    from rag_lab.index import build_index

    settings = get_settings()
    dataset = _dataset(args.dataset)
    modes = parse_modes(args.modes)
    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be ≥ 1, got {args.limit}")
    build_index(dataset, settings)  # no-op when up to date
    params = {"rrf_k": args.fusion_k, "prefetch": args.prefetch,
              "dense_weight": args.dense_weight, "sparse_weight": args.sparse_weight}
    report = evaluate_modes(dataset, settings, modes, params, resume=not args.no_resume, limit=args.limit)
    print(render_ir_table(report.results, title=f"{dataset.name}: IR metrics (ranx)"))
    if args.json:
        from pathlib import Path

        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2))
        print(f"wrote {args.json}")
    return 0


from rag_lab.cli.demo import add_demo  # noqa: E402  (registered last: it uses the commands above)

REGISTRY = [add_index, add_search, add_ir, add_demo]
from rag_lab.cli.ask import add_ask; REGISTRY.append(add_ask)  # noqa: E402,E702  (rag-lab ask)
from rag_lab.cli.chat import add_chat; REGISTRY.append(add_chat)  # noqa: E402,E702  (rag-lab chat)
