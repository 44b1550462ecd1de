"""`rag-lab demo`: the main job on the configured (by default fully offline) stack.

1. index every dataset the demo uses (idempotent; parsed PDFs and embeddings cached);
2. one sample search per available retrieval mode, with hybrid's explanation;
3. the IR table on SciFact beside the published anchors;
4. one sample question answered in every configured mode (engines and the agent; answers cached), then a
   handful of synthetic questions made from texas_childcare (rag-lab synth; cached);
5. mode comparison, retrieval ablation grid and HTML reports under reports/ (rag_lab/cli/demo_reports.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rag_lab.cli.settings import get_settings



def add_demo(sub, common) -> None:
    p = sub.add_parser("demo", help="the whole lab on the bundled datasets: index, search in every mode, IR table on "
                                    "SciFact, one question answered in every mode, mode comparison + ablation grid + "
                                    "HTML reports", description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", default="texas_childcare,scifact",
                   help="comma-separated datasets to index and search (steps 1-2; default texas_childcare,scifact)")
    p.add_argument("--ir-limit", type=int, default=None, help="evaluate only N SciFact queries")
    p.add_argument("--skip-ir", action="store_true", help="skip step 3, the IR table on SciFact")
    p.add_argument("--skip-ask", action="store_true", help="skip step 4, the sample question answered in every mode")
    p.add_argument("--skip-reports", action="store_true",
                   help="skip step 5, the mode comparison, ablation grid and HTML reports")
    p.add_argument("--skip-synth", action="store_true",
                   help="skip the synthetic-question step (rag-lab synth texas_childcare --n 3, after step 4)")
    p.add_argument("--report-datasets", default="texas_childcare_full,scifact",
                   help="datasets of the mode comparison + ablation grid + HTML reports step (default %(default)s)")
    p.add_argument("--answer-limit", type=int, default=3, help="questions answered per mode in the report step (default %(default)s)")
    p.add_argument("--config", default=str(RECOMMENDED), metavar="FILE",
                   help="a recommended configuration (rag-lab tune) answered beside the defaults in step 4 "
                        "(default %(default)s, when it exists)")
    common(p)
    p.set_defaults(handler=run_demo)


def _embedded(settings) -> str:
    return "Qdrant Edge, in-process" if settings.vector_backend == "edge" else "qdrant-client local mode"


def _banner(text: str) -> None:
    print(f"\n{'=' * 100}\n{text}\n{'=' * 100}")


def run_demo(args) -> int:
    from rag_lab.cli.render import render_ir_table, render_results
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.retrieval.ir import SCIFACT_ANCHORS, evaluate_modes
    from rag_lab.index import build_index
    from rag_lab.retrieve import INDEX_MODES, build_retriever

    settings = get_settings()
    datasets = [resolve_dataset(n.strip(), settings.datasets_dir) for n in args.datasets.split(",") if n.strip()]
    report_names = [] if args.skip_reports else [n.strip() for n in args.report_datasets.split(",") if n.strip()]
    _banner(f"1. Indexing ({settings.embed_provider} embeddings: {settings.embed_model_name}; "
            f"Qdrant: {'server ' + settings.qdrant_url if settings.qdrant_url else _embedded(settings)})")
    for dataset in _indexed_first(datasets, report_names, settings):
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
        from rag_lab.retrieve.configuration import DEFAULTS

        _banner(f"3. IR evaluation on {dataset.name} (ranx; depth 100; fusion k={DEFAULTS.fusion_k}, "
                f"prefetch {DEFAULTS.prefetch})")
        report = evaluate_modes(dataset, settings, list(INDEX_MODES), limit=args.ir_limit)
        print(render_ir_table(report.results, title=report.describe(),
                              anchors=SCIFACT_ANCHORS if dataset.name == "scifact" else None))
        out = Path("reports") / f"ir_{dataset.name}.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(report.to_json(), indent=2))
        print(f"\nwrote {out}")

    qa = [d for d in datasets if d.qa_file is not None and d.kind == "folder"]
    if qa and not args.skip_ask:
        _ask_every_mode(qa[0], settings, modes, args.config)
    if not args.skip_synth:
        from rag_lab.cli.demo_synth import run_synth_step

        run_synth_step(settings, _banner)
    if not args.skip_reports:
        from rag_lab.cli.demo_reports import run_reports

        _banner("5. Mode comparison, retrieval ablation grid (fusion k × prefetch × top-k) and HTML reports")
        run_reports(settings, report_names, answer_limit=args.answer_limit)
    return 0


def _indexed_first(datasets, report_names: list[str], settings) -> list:
    """Every dataset the demo will use, so that all indexing (PDF parsing in worker processes,
    embeddings) happens before any model is loaded for answering."""
    from rag_lab.datasets import resolve_dataset
    from rag_lab.errors import DatasetError

    everything = {d.name: d for d in datasets}
    for name in report_names:
        if name not in everything:
            try:
                everything[name] = resolve_dataset(name, settings.datasets_dir)
            except DatasetError:
                pass  # the report step says it skips this dataset, and why
    return list(everything.values())


SAMPLE_QUESTION = "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"
SAMPLE_EXPECTED = ("$4,106",)  # the Bi-Weekly cell of the Family Size 5 row


def sample_check(answer: str) -> str:
    """The demo's check of an answer to SAMPLE_QUESTION, by its own statements (a quoted row holding
    $4,106 under a sentence stating $4,449 is wrong): "right", or what is wrong."""
    from rag_lab.evaluate.facts.expected import check_expected

    check = check_expected(answer, SAMPLE_EXPECTED, SAMPLE_QUESTION)
    return "right" if check.right else f"WRONG ({check.reason})"
RECOMMENDED = Path("configs") / "texas_childcare_full.toml"  # written by `rag-lab tune texas_childcare_full`


def _recommended(path: str | None, dataset: str | None = None):
    """(label, mode, answer params) of the tuned configuration, or None when there is no file; a
    warning when it was tuned on another dataset than ``dataset``."""
    if not path or not Path(path).is_file():
        return None
    from rag_lab.retrieve.tuned_config import read_tuned_config, warn_if_tuned_elsewhere

    config = read_tuned_config(path)
    warn_if_tuned_elsewhere(config, path, dataset)
    return f"recommended: {config.describe()}", config.mode, config.answer_params()


def recommended_summary(path: str | None) -> str | None:
    """What the demo prints about the tuned file: its settings beside the default, and the numbers
    ``rag-lab tune`` confirmed (its [provenance] table), or None when there is no file."""
    if not path or not Path(path).is_file():
        return None
    from rag_lab.answer.engine import DEFAULT_TOP_K
    from rag_lab.answer.rerank import DEFAULT_TOP_N
    from rag_lab.retrieve.tuned_config import TunedConfig, read_tuned_config

    config = read_tuned_config(path)
    default = TunedConfig(mode=config.mode, top_k=DEFAULT_TOP_K, top_n=DEFAULT_TOP_N)  # `ask` without --config
    p = config.provenance
    lines = [f"recommended configuration ({path}, written by `rag-lab tune {p.get('dataset', 'DATASET')}`):",
             f"  recommended: {config.describe()}",
             f"  default    : {default.describe()}"]
    if p.get("adopted") is False:
        lines.append(f"  the default kept: the dev pick {p.get('dev_pick', '')} was not significantly better on the "
                     f"rest split ({p.get('rest_pick_mean', float('nan')):.4f} vs {p.get('rest_default_mean', float('nan')):.4f})")
    elif {"metric", "dev_mean", "rest_mean", "rest_default_mean"} <= set(p):
        lines.append(f"  {p['metric']} chosen on {p.get('chosen_on', 'dev')}: {p['dev_mean']:.4f}; confirmed on the rest "
                     f"split: {p['rest_mean']:.4f} vs the default's {p['rest_default_mean']:.4f}"
                     + (f" (p = {p['rest_p_value']:.1e}, {p.get('rest_decided_by', 'paired test')})" if "rest_p_value" in p
                        else f" (paired t p = {p['rest_p_student']:.1e})" if "rest_p_student" in p else ""))
    return "\n".join(lines)


def _ask_every_mode(dataset, settings, modes: list[str], config_path: str | None = None) -> None:
    from rag_lab.answer.adapter import make_answerer
    from rag_lab.evaluate.plan.answering import CachedAnswerer
    from rag_lab.evaluate.plan.answering import answer_style_input, context_window_input, model_id
    from rag_lab.index import CorpusIndex
    from rag_lab.models.llm.disk_cache import DiskCache
    from rag_lab.retrieve.registry import AGENT, is_agent

    local = settings.llm_is_local
    # The ask command's defaults (7 chunks; compression keeps a local model's prompt short), without
    # the LLM rerank for a local model (it reranks only when asked, see README).
    options = {"rerank": False} if local else {}
    _banner(f"4. '{SAMPLE_QUESTION}' in every mode ({settings.llm_provider}: {settings.llm_model_name}"
            + ("; rerank off for the offline model" if local else "")
            + "; answers cached: a rerun prints them again without generating)")
    fingerprint = CorpusIndex.open(dataset, settings).manifest.fingerprint
    cache = DiskCache(settings.cache_dir / "llm.sqlite")
    recommended = _recommended(config_path, dataset.name)
    if summary := recommended_summary(config_path):
        print(summary)
    runs = [(mode, mode, {} if is_agent(mode) else options) for mode in [*modes, AGENT]]
    if recommended:  # the tuned configuration beside the defaults
        label, mode, params = recommended
        runs.append((label, mode, {**options, **params}))
    checks: dict[str, str] = {}
    try:
        for label, mode, params in runs:
            answerer = CachedAnswerer(
                mode, lambda m=mode, p=params: make_answerer(m, settings, dataset, **p),
                model_id=model_id(settings, for_agent=is_agent(mode)),
                inputs={"demo": True, "params": params, "index": fingerprint,
                        "context_lines": settings.context_lines, **context_window_input(settings),
                        **answer_style_input(settings)}, cache=cache)
            fields, cached = answerer.answer(SAMPLE_QUESTION)
            sources = fields["cited_sources"] or fields["retrieved_sources"]
            listed = ", ".join(f"{s['doc']} p.{s['page']}" if s.get("page") is not None else s["doc"] for s in sources)
            text = " ".join(fields["answer"].split())
            print(f"\n[{label}] {fields['latency']['total']:.1f}s{' (cached)' if cached else ''}, "
                  f"{fields['usage'].get('total_tokens', 0)} tokens")
            print(f"  answer : {text[:400]}{'…' if len(text) > 400 else ''}")
            print(f"  {'cited' if fields['cited_sources'] else 'retrieved (nothing cited)'}: {listed or '—'}")
            checks[label] = sample_check(fields["answer"])
            print(f"  check  : {checks[label]} — its own sentence must state {', '.join(SAMPLE_EXPECTED)}")
    finally:
        cache.close()
    right = [label for label, verdict in checks.items() if verdict == "right"]
    print(f"\n{len(right)} of {len(checks)} answers state {', '.join(SAMPLE_EXPECTED)} in their own statement"
          + (f" (wrong: {', '.join(label for label in checks if label not in right)})" if len(right) < len(checks) else ""))
