"""`rag-lab eval`: run modes over a dataset's questions and print the per-mode table."""

from __future__ import annotations

import argparse
import math

from rag_lab.cli.settings import get_settings, positive_int  # lazy: --help must not load pydantic-settings


def add_eval(sub, common) -> None:
    p = sub.add_parser("eval", help="answer a dataset's questions in each mode and score them (RAGAS, ranx)")
    p.add_argument("dataset", help="a dataset with questions (qa.jsonl): a name under the datasets folder "
                                   "(RAG_LAB_DATASETS_DIR, default ./datasets) or a folder path")
    p.add_argument("--modes", default=None,
                   help="comma-separated: dense,bm25,fusion,hybrid,agent,kendra (default dense,bm25,fusion,hybrid; "
                        "with --config: the file's mode)")
    p.add_argument("--out", default=None,
                   help="run folder (default runs/<dataset>); one holding another run (another dataset, configuration, "
                        "modes or questions) is refused unless --resume (same configuration) or --force")
    p.add_argument("--limit", type=positive_int, default=None, help="N questions spread over the source documents (round-robin; default: every question)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --out: run the samples not yet there, and again those whose answer or "
                        "judged metric failed for a reason that may pass (server error, timeout, judge deadline, rate "
                        "limit, connection), keeping what succeeded")
    from rag_lab.cli.options import add_force_option

    add_force_option(p)
    p.add_argument("--retry-failed", action="store_true",
                   help="with --resume, also run again the failures that will not change on their own (a refused "
                        "key or model, a judgement the judge could not parse)")
    p.add_argument("--metrics", default=None, metavar="M1,M2",
                   help="comma-separated metrics to compute, judged and not (default all; judged ones need --judge), "
                        "e.g. faithfulness,factual_correctness,rouge_l,ndcg@10")
    from rag_lab.cli.options import add_questions_option, add_split_option

    add_split_option(p)
    add_questions_option(p)
    p.add_argument("--judge", default=None, metavar="PROVIDER[:MODEL]",
                   help="LLM judge for the judged RAGAS metrics: local[:MODEL] (the offline GGUF model, every "
                        "call constrained to RAGAS's JSON schema) or e.g. openai:gpt-5-mini")
    p.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                   help="LLM rerank of the retrieved chunks (default as in `rag-lab ask`: on with a remote LLM "
                        "provider, off with the local model)")
    p.add_argument("--conversations", action="store_true", help="also run the dataset's multi-turn scenarios (agent)")
    p.add_argument("--top-k", type=positive_int, default=None,
                   help="chunks the retriever returns per query (default 30; agent: per search, default 5)")
    p.add_argument("--top-n", type=positive_int, default=None, help="chunks given to the LLM (default 7)")
    from rag_lab.cli.ask import add_answer_style_option
    from rag_lab.cli.levers import add_contextual_option, add_fusion_options

    add_fusion_options(p)
    add_contextual_option(p)
    add_answer_style_option(p)
    p.add_argument("--concurrency", type=positive_int, default=None, metavar="N",
                   help="samples in flight at once, answering and judging (default 1 for the local model, "
                        "8 for remote providers)")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD",
                   help="stop before the estimated cost (list prices, rag_lab/models/pricing.py) would pass USD")
    p.add_argument("--dry-run", action="store_true",
                   help="print the LLM calls, tokens, time and cost the run would take; call nothing")
    from rag_lab.cli.options import add_json_option, add_ray_options

    add_json_option(p, "the summary (per mode × metric) and the per-mode table")

    add_ray_options(p, "answer and score the samples on Ray actors, each loading its models once (this process "
                       "still writes every result)")
    common(p)
    p.set_defaults(handler=run_eval)


def _cell(mean: float, nan: int, n: int) -> str:
    """``mean · failed k/m``: the mean over the n scored samples and how many of the m applicable failed
    (shown even when 0, so a reader never has to guess whether failures were averaged away); ``n/a``
    when none could be scored."""
    text = "n/a" if mean is None or (isinstance(mean, float) and math.isnan(mean)) else f"{mean:.3f}"
    return f"{text} · failed {nan}/{n + nan}"


FAILED_LEGEND = ("failed k/m: samples whose metric failed or came back NaN, of the m it applies to, left out of the "
                 "mean (not counted as 0); n/a: nothing to show")


def render_eval_table(run) -> str:
    """Metrics as rows, modes as columns; each mean with its failed count (failed / applicable) beside it;
    the first line says which questions the means are over (``--split``); below the table, why a
    metric could not be scored anywhere and what the labels mean."""
    from rag_lab.evaluate.store.frames import metric_order, split_label
    from rag_lab.report.eval_sections import failure_reasons, missing_figure

    modes = list(run.modes["mode"])
    rows: list[tuple[str, list[str]]] = []
    unscored: list[str] = []
    summary = run.summary.set_index(["mode", "metric"]) if not run.summary.empty else None
    for metric in metric_order(sorted(set(run.summary["metric"]))):
        cells = []
        for mode in modes:
            if summary is not None and (mode, metric) in summary.index:
                row = summary.loc[(mode, metric)]
                cells.append(_cell(float(row["mean"]), int(row["nan"]), int(row["n"])))
                if int(row["n"]) == 0:
                    reasons = failure_reasons(run, mode, metric)
                    reason = reasons.most_common(1)[0][0] if reasons else "NaN score"
                    unscored.append(f"n/a: {metric} in {mode}: every sample failed ({reason[:160]})")
            else:
                cells.append("n/a (not applicable)")
        rows.append((metric, cells))
    info = run.modes.set_index("mode")
    # dev_split counts samples of the declared dev split; shown (and explained below the table) only when there are any
    has_dev = "dev_split" in info.columns and info["dev_split"].fillna(0).sum() > 0
    counts = [("samples", "{:.0f}"), *([("dev_split", "{:.0f}")] if has_dev else []), ("errors", "{:.0f}")]
    if "unjudgeable" in info.columns and info["unjudgeable"].fillna(0).sum() > 0:
        counts.append(("unjudgeable", "{:.0f}"))  # no document-level metrics: source_file names no document
    for column, fmt in [*counts, ("cached", "{:.0f}"),
                        ("cites_nothing", "{:.0%}"), ("non_answers", "{:.0%}"), ("citations_unverifiable", "{:.0f}"),
                        ("latency_p50_s", "{:.2f}"), ("latency_p95_s", "{:.2f}"),
                        ("total_tokens", "{:.0f}"), ("cost_usd", "{:.4f}")]:
        rows.append((column, [(missing_figure(column, info.loc[m, "samples"] > info.loc[m, "errors"])
                               if _isnan(info.loc[m, column]) else fmt.format(info.loc[m, column])) for m in modes]))
    width = max(len(r[0]) for r in rows) + 2
    col = max([14, *(len(c) + 2 for _, cells in rows for c in cells), *(len(m) + 2 for m in modes)])
    header = f"{'metric':<{width}}" + "".join(f"{m:>{col}}" for m in modes)
    lines = [f"means over {split_label(run.manifest)}", header, "-" * len(header)]
    lines += [f"{name:<{width}}" + "".join(f"{c:>{col}}" for c in cells) for name, cells in rows]
    lines += [FAILED_LEGEND, *unscored]
    lines += [f"note: {note}" for note in getattr(run, "notes", [])]
    return "\n".join(lines)


def _isnan(value) -> bool:
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def run_eval(args) -> int:
    import sys
    from pathlib import Path

    from rag_lab.cli.ask import rerank_default, with_answer_style
    from rag_lab.cli.options import emit_json, ray_sample_executor
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate import run_evaluation

    settings = with_answer_style(get_settings(), args.answer_style)
    from rag_lab.cli.options import with_dev_split, with_questions_arg

    dataset = with_questions_arg(with_dev_split(resolve_dataset(args.dataset, settings.datasets_dir), args), args)
    from rag_lab.api import EVAL_MODES
    from rag_lab.cli.levers import answer_params
    from rag_lab.cli.settings import announce_config, configured_modes

    announce_config(args, dataset.name)
    modes = ([m.strip() for m in args.modes.split(",") if m.strip()] if args.modes is not None
             else configured_modes(args, EVAL_MODES))
    params = answer_params(args)
    out = Path(args.out) if args.out else Path("runs") / dataset.name
    metrics = [m.strip() for m in args.metrics.split(",")] if args.metrics is not None else None
    if metrics and not args.judge:
        from rag_lab.evaluate.metrics import all_specs

        if needs_judge := [s.name for s in all_specs() if s.judged and s.name in metrics]:
            print(f"error: {', '.join(needs_judge)} {'is' if len(needs_judge) == 1 else 'are'} judged by an LLM, and "
                  "this run has no judge\n  → add --judge PROVIDER[:MODEL], or choose other --metrics", file=sys.stderr)
            return 2
    if args.split != "all":
        from rag_lab.splits import select_split

        select_split([], dataset.dev_split, args.split, dataset.name)  # no dev_split.txt: refused before any work
    run = run_evaluation(dataset, settings, modes, out, limit=args.limit, split=args.split, resume=args.resume,
                         judge=args.judge,
                         metrics=metrics, retry_failed=args.retry_failed,
                         rerank=rerank_default(args.rerank, settings), conversations=args.conversations,
                         progress=True, concurrency=args.concurrency, max_cost=args.max_cost,
                         dry_run=args.dry_run, executor=ray_sample_executor(args), force=args.force, **params)
    if args.dry_run:
        print(run.summary())
        return 2 if run.folder_refused else 0  # a script sees that the real run would be refused
    if args.json:
        from rag_lab.evaluate.store.frames import split_label

        emit_json(args.json, {"split": (run.manifest.get("config") or {}).get("split", "all"),
                              "split_label": split_label(run.manifest),
                              "summary": run.summary.to_dict(orient="records"),
                              "modes": run.modes.to_dict(orient="records")})
    if args.json != "-":
        print(f"{dataset.name}: {len(run.modes)} mode(s), run folder {out}")
        print(render_eval_table(run))
        from rag_lab.report.eval_sections import run_verdict

        if (verdict := run_verdict(run)) is not None:
            print(f"verdict: {verdict.headline()} — the reasons in the report: rag-lab report {out} --out FILE.html")
        from rag_lab.report.calibration_section import summary_lines

        for line in summary_lines(run):  # judged metrics: calibrated by labels, or "not calibrated"
            print(line)
        if int(run.modes["dev_split"].max()) if not run.modes.empty else 0:
            print(f"dev_split: samples of {dataset.name}'s declared dev split (tuning looked at them; rag_lab.splits) "
                  "are marked \"dev_split\": true in samples.jsonl; leave them out for a held-out number")
    print(f"samples: {out}/<mode>/samples.jsonl; manifest: {out}/manifest.json", file=sys.stderr)
    return exit_status(run.records)


def exit_status(records: dict[str, list[dict]]) -> int:
    """Exit status of a finished run: 1, with its distinct errors, when not one sample got through (a dead
    server, a wrong model name: nothing was measured, so a script must not carry on as if it were)."""
    import sys

    items = [r for mode_records in records.values() for r in mode_records]
    if not items or not all(r.get("error") for r in items):
        return 0
    errors = sorted({str(r["error"]).splitlines()[0] for r in items})
    print(f"error: every one of the {len(items)} samples failed, so nothing was measured:", file=sys.stderr)
    for error in errors[:3]:
        print(f"  {error}", file=sys.stderr)
    if len(errors) > 3:
        print(f"  … and {len(errors) - 3} other error(s): see samples.jsonl", file=sys.stderr)
    return 1
