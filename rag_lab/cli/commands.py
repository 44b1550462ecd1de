"""Sub-commands. Each ``add_*`` registers a parser whose handler calls into the library."""

from __future__ import annotations

import functools
import json
import sys

from rag_lab.api import IR_MODES, SEARCH_TOP_K
from rag_lab.cli.levers import add_contextual_option, add_fusion_options, add_retrieval_options, fusion_params, retrieval_params
from rag_lab.cli.options import add_dataset_argument, add_json_option, add_ray_options, emit_json, ray_build_executor
from rag_lab.cli.options import resolve_dataset_arg as _dataset
from rag_lab.cli.settings import announce_config, configured_modes, get_settings, positive_int, resolved_mode


def add_index(sub, common) -> None:
    p = sub.add_parser("index", help="build or refresh a dataset's index (idempotent)")
    add_dataset_argument(p)
    p.add_argument("--force", action="store_true", help="rebuild even if nothing changed (embeddings still reused)")
    p.add_argument("--contextual", choices=("annotations", "llm", "both"), default=None,
                   help="build a contextual variant beside the plain index: each chunk's context (path annotations "
                        "from annotations.yaml, an LLM-written context, or both) is prepended to what is embedded "
                        "and BM25-indexed")
    p.add_argument("--yes", action="store_true", help="confirm an LLM context run beyond the call/time/cost threshold")
    p.add_argument("--context-in-prompt", action="store_true",
                   help="with --contextual: also show each chunk's context to the answering LLM")
    add_ray_options(p, "parse the PDFs and embed the chunks on Ray (the index written is the same)")
    common(p)
    p.set_defaults(handler=run_index)


def run_index(args) -> int:
    from rag_lab.index import build_index

    settings = get_settings()
    if args.context_in_prompt and not args.contextual:
        raise ValueError("--context-in-prompt needs --contextual annotations|llm|both")
    # progress: rag_lab.progress — a bar on a TTY, plain lines otherwise
    result = build_index(_dataset(args.dataset), settings, force=args.force, progress=True,
                         contextual=args.contextual or "none", yes=args.yes, context_in_prompt=args.context_in_prompt,
                         executor=ray_build_executor(args, settings))
    print(result.summary())
    for skipped in result.manifest.skipped:
        print(f"  skipped {skipped['path']}: {skipped['reason']}")
    if args.contextual:
        from rag_lab.cli.render import render_context_report

        print(render_context_report(result.manifest, result.up_to_date))
    return 0


def add_search(sub, common) -> None:
    from rag_lab.retrieve.registry import describe_modes, retrieval_modes

    p = sub.add_parser("search", help="ranked chunks for a query")
    add_dataset_argument(p, " (ignored by kendra)")
    p.add_argument("query", help="the query, in quotes")
    p.add_argument("--mode", choices=retrieval_modes(), default=None,
                   help=f"{describe_modes()} (default hybrid, or the --config file's mode)")
    add_retrieval_options(p)
    p.add_argument("--explain", action="store_true", help="show each leg's rank, score and RRF term (fusion, hybrid)")
    add_json_option(p, "the ranked chunks")
    add_contextual_option(p)
    common(p)
    p.set_defaults(handler=run_search)


def run_search(args) -> int:
    import time

    from rag_lab.cli.render import render_results, search_header
    from rag_lab.retrieve.records import results_json
    from rag_lab.retrieve.registry import build_retriever, registry_entry

    settings = get_settings()
    args.mode = resolved_mode(args)
    entry = registry_entry(args.mode)
    dataset = _dataset(args.dataset) if entry.needs_index else None
    announce_config(args, dataset.name if dataset else None)
    params = retrieval_params(args, explain=args.explain)
    params["top_k"] = SEARCH_TOP_K if params["top_k"] is None else params["top_k"]  # --top-k 0 is an error
    retriever = build_retriever(args.mode, settings, dataset, contextual=args.contextual, **params)
    started = time.perf_counter()
    results = retriever.retrieve(args.query)
    seconds = time.perf_counter() - started
    if args.json:
        emit_json(args.json, results_json(results, include_explanation=args.explain))
    if args.json != "-":
        print(search_header(args.mode, dataset.name if dataset else entry.service, args.query, len(results), seconds))
        print(render_results(results, explain=args.explain))
    return 0


def add_ir(sub, common) -> None:
    from rag_lab.retrieve.registry import index_modes

    p = sub.add_parser("ir", help="IR metrics (ranx) of retrieval modes: BEIR qrels, or document-level relevance from qa.jsonl source files")
    add_dataset_argument(p, " with judgements (BEIR qrels, or qa.jsonl with source_file)")
    p.add_argument("--modes", default=None,
                   help=f"comma-separated retrieval modes ({', '.join(index_modes())}) (default {','.join(IR_MODES)}; "
                        "with --config: the file's mode)")
    add_fusion_options(p)
    p.add_argument("--limit", type=positive_int, default=None, help="N queries spread over the relevant documents (round-robin; default: every query)")
    from rag_lab.cli.options import add_questions_option, add_split_option

    add_split_option(p)
    add_questions_option(p)
    p.add_argument("--no-resume", action="store_true", help="ignore checkpointed runs")
    add_json_option(p, "the metrics table")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="also write a run folder (manifest, per-query scores) for `rag-lab report DIR --out FILE.html`; "
                        "one holding another dataset's run (or an eval or ablation run) is refused unless --force")
    from rag_lab.cli.options import add_force_option

    add_force_option(p)
    p.add_argument("--pool", metavar="FILE.jsonl", default=None,
                   help="write, for review, each question's unjudged top-10 documents that state every key fact of "
                        "its reference answer (never counted as relevant); Q&A datasets")
    add_contextual_option(p)
    common(p)
    p.set_defaults(handler=run_ir)


def parse_modes(text: str) -> list[str]:
    from rag_lab.errors import ConfigError
    from rag_lab.retrieve.registry import index_modes

    modes = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in modes if m not in index_modes()]
    if unknown or not modes:
        raise ConfigError(f"Unknown or missing mode(s) for IR evaluation: {', '.join(unknown) or '(none)'}",
                          f"choose from {', '.join(index_modes())}")
    return modes


def run_ir(args) -> int:
    from rag_lab.cli.options import with_dev_split, with_questions_arg

    settings = get_settings()
    dataset = with_questions_arg(with_dev_split(_dataset(args.dataset), args), args)
    announce_config(args, dataset.name)
    modes = parse_modes(args.modes) if args.modes is not None else configured_modes(args, IR_MODES)
    # Queries and qrels first: a dataset without them fails in a second, not after an index build.
    from rag_lab.errors import DatasetError

    queries, qrels = dataset.load_queries(), dataset.load_qrels()
    if not any(q in qrels for q in queries):
        raise DatasetError(f"Dataset {dataset.name!r}: none of its {len(queries)} queries has relevance judgements",
                           "the query ids in the qrels file must match the queries' ids")
    if args.split != "all":
        dataset.judged_queries(split=args.split)  # no dev_split.txt: the error comes before any index build
    from contextlib import nullcontext

    from rag_lab.evaluate.store.run_lock import run_lock

    with run_lock(args.out) if args.out else nullcontext():  # one writer per run folder
        if args.out:  # a folder holding another dataset's (or kind's) run is refused, or moved aside by --force
            from rag_lab.evaluate.store.claim import RunOwner, claim_run_folder
            from rag_lab.evaluate.store.manifest import dataset_hash

            claim_run_folder(args.out, RunOwner("ir", dataset.name, dataset_hash(dataset), f"modes {','.join(modes)}"),
                             force=args.force)
        return _run_ir_locked(args, settings, dataset, modes)


def _run_ir_locked(args, settings, dataset, modes) -> int:
    from rag_lab.cli.render import render_ir_table
    from rag_lab.evaluate.retrieval.ir import evaluate_modes
    from rag_lab.index import build_index

    build_index(dataset, settings, progress=True, contextual=args.contextual)  # no-op when up to date
    report = evaluate_modes(dataset, settings, modes, fusion_params(args), resume=not args.no_resume, limit=args.limit,
                            contextual=args.contextual, split=args.split, pool=bool(args.pool))
    variant = f" (contextual {args.contextual})" if args.contextual != "none" else ""
    say = functools.partial(print, file=sys.stderr if args.json == "-" else sys.stdout)  # stdout: the JSON alone
    say(render_ir_table(report.results, title=f"{dataset.name}{variant}: IR metrics (ranx) — {report.describe()}"))
    say(render_chunk_hit_cis(report.per_query))
    if args.pool:
        from pathlib import Path

        Path(args.pool).parent.mkdir(parents=True, exist_ok=True)
        Path(args.pool).write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in report.pooled),
                                   encoding="utf-8")
        questions = len({e["qid"] for e in report.pooled})
        say(f"wrote {args.pool}: {len(report.pooled)} unjudged top-10 document(s) stating every key fact of the "
              f"reference, for {questions} question(s) — for review, not counted as relevant")
    if args.json:
        emit_json(args.json, report.to_json())
    if args.out:
        from rag_lab.evaluate.retrieval.ir import write_ir_run

        say(f"wrote {write_ir_run(report, dataset, settings, args.out)} (render it: rag-lab report {args.out} --out FILE.html)")
    return 0


def render_chunk_hit_cis(per_query: dict) -> str:
    """chunk_hit@5 per mode with its seeded 95 % bootstrap interval (the goal metric)."""
    from rag_lab.evaluate.retrieval.ir import CHUNK_HIT
    from rag_lab.evaluate.statistics.significance import bootstrap_ci

    cells = []
    for mode, metrics in per_query.items():
        ci = bootstrap_ci(list(metrics.get(CHUNK_HIT, {}).values()))
        cells.append(f"{mode} {ci['mean']:.4f} [{ci['ci_low']:.4f}, {ci['ci_high']:.4f}]")
    return (f"{CHUNK_HIT} (a relevant document among the first 5 chunks, before documents are deduplicated; "
            f"95 % bootstrap CI): " + "; ".join(cells))


from rag_lab.cli.demo import add_demo  # noqa: E402  (registered last: it uses the commands above)

REGISTRY = [add_index, add_search, add_ir, add_demo]
from rag_lab.cli.ask import add_ask; REGISTRY.append(add_ask)  # noqa: E402,E702  (rag-lab ask)
from rag_lab.cli.chat import add_chat; REGISTRY.append(add_chat)  # noqa: E402,E702  (rag-lab chat)
from rag_lab.cli.eval import add_eval; REGISTRY.append(add_eval)  # noqa: E402,E702  (rag-lab eval)
from rag_lab.cli.ablate import add_ablate, add_report; REGISTRY += [add_ablate, add_report]  # noqa: E402,E702
from rag_lab.cli.split import add_split; REGISTRY.append(add_split)  # noqa: E402,E702  (rag-lab split)
from rag_lab.cli.tune import add_tune; REGISTRY.append(add_tune)  # noqa: E402,E702  (rag-lab tune)
from rag_lab.cli.compare import add_compare, add_runs; REGISTRY += [add_compare, add_runs]  # noqa: E402,E702
from rag_lab.cli.label import add_label; REGISTRY.append(add_label)  # noqa: E402,E702  (rag-lab label)
from rag_lab.cli.synth import add_synth; REGISTRY.append(add_synth)  # noqa: E402,E702  (rag-lab synth)
