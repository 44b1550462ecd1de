"""`rag-lab ablate` and `rag-lab report`: thin wrappers over rag_lab.evaluate.ablation and rag_lab.report."""

from __future__ import annotations

import sys
from pathlib import Path

from rag_lab.cli.options import add_axis_options, add_dataset_argument, add_force_option, add_split_option
from rag_lab.cli.settings import get_settings, positive_int  # lazy: --help must not load pydantic-settings
from rag_lab.errors import ConfigError


def add_ablate(sub, common) -> None:
    p = sub.add_parser("ablate", help="fusion/hybrid ablation grid from cached candidate lists (ranx, RAGAS, significance)")
    add_dataset_argument(p, " with judgements")
    p.add_argument("--grid", default=None, metavar="FILE",
                   help="the grid as a YAML or TOML file (keys: modes and the axes' flags' names, e.g. fusion_k, "
                        "max_per_doc; see rag_lab/evaluate/ablation/grid_file.py); a flag below overrides its key")
    p.add_argument("--modes", default=None, help="fused modes to ablate (default fusion,hybrid)")
    add_axis_options(p)  # --fusion-k, --prefetch, --weights, --max-per-doc, --top-k (rag_lab.retrieve.configuration)
    p.add_argument("--config", metavar="FILE", default=None,
                   help="a tuned configuration (TOML written by `rag-lab tune`): each axis neither --grid nor a flag "
                        "gives takes the file's one value, to vary one lever around it")
    p.add_argument("--out", default=None,
                   help="run folder (default runs/ablation-<dataset>); a rerun of the same ablation resumes from its "
                        "leg cache, one holding another run (another dataset, grid, questions or seed) is refused "
                        "unless --force")
    add_force_option(p)
    p.add_argument("--limit", type=int, default=None, help="N questions spread over the source documents (round-robin; default: every question)")
    p.add_argument("--seed", type=int, default=42, help="seed of the bootstrap confidence intervals (default %(default)s)")
    p.add_argument("--answer-configs", default=None,
                   help="configurations also answered by the LLM: 'none', top-k values (e.g. 3,5,7) or config ids "
                        "from results.csv (default: top-k 3/5/7 at the default k and prefetch)")
    p.add_argument("--answer-limit", type=int, default=5,
                   help="questions answered per answer configuration, spread over the source documents like --limit "
                        "(default %(default)s)")
    p.add_argument("--contextual", default="none",
                   help="contextual index variants as an ablation axis, comma-separated among none, annotations, "
                        "llm, both (e.g. none,annotations): the grid runs on each (retrieval metrics; no answering), "
                        "and each is compared with the first (default none: the plain index only)")
    p.add_argument("--yes", action="store_true", help="confirm an LLM context run beyond the call/time/cost threshold")
    p.add_argument("--concurrency", type=positive_int, default=None, metavar="N",
                   help="LLM calls in flight at once: answers (--answer-configs) and chunk contexts (--contextual "
                        "llm|both) (default 1 for the local model, 8 for remote providers)")
    add_split_option(p)
    from rag_lab.cli.options import add_questions_option

    add_questions_option(p)
    common(p)
    p.set_defaults(handler=run_ablate)


def grid_from_args(args):
    """The grid of ``--grid FILE`` and the axis flags (a flag given wins over the file's key; an axis
    neither names takes the ``--config`` file's value, else the default): the same :class:`GridSpec` either way."""
    from rag_lab.cli.options import axis_flags
    from rag_lab.cli.settings import tuned_config
    from rag_lab.evaluate.ablation.grid_file import config_axes, grid_spec

    flags = {"modes": tuple(m.strip() for m in args.modes.split(",") if m.strip()) if args.modes is not None else None,
             **axis_flags(args)}
    config = tuned_config(args)
    return grid_spec(args.grid, base=config_axes(config) if config else None, **flags)


def run_ablate(args) -> int:
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.ablation.runner import run_ablation
    from rag_lab.index import build_index

    settings = get_settings()
    spec = grid_from_args(args)
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be ≥ 1, got {args.limit}", "drop --limit to use every question")
    from rag_lab.cli.options import with_dev_split, with_questions_arg

    dataset = with_questions_arg(with_dev_split(resolve_dataset(args.dataset, settings.datasets_dir), args), args)
    from rag_lab.cli.settings import announce_config

    announce_config(args, dataset.name)
    dataset.load_queries()  # says what is missing before any index is built
    if args.split != "all":
        dataset.judged_queries(split=args.split)  # no dev_split.txt: the error comes before any index build
    out = Path(args.out or f"runs/ablation-{dataset.name}")
    from rag_lab.evaluate.ablation.contextual import parse_variants

    try:
        variants = parse_variants(args.contextual)
    except ValueError as exc:
        raise ConfigError(str(exc), "e.g. --contextual none,annotations") from None
    if variants != ("none",):
        if args.concurrency is not None:  # the chunk-context pass of each variant's build
            settings = settings.model_copy(update={"llm_concurrency": args.concurrency})
        return _run_contextual(args, dataset, settings, spec, out, variants)
    build_index(dataset, settings)  # no-op when up to date
    from rag_lab.evaluate.ablation.answers import parse_answer_configs

    answer_configs = None
    if (args.answer_configs or "").strip().lower() != "none":
        try:
            answer_configs = parse_answer_configs(args.answer_configs, spec)
        except ValueError as exc:
            raise ConfigError(str(exc), "see results.csv's config column for valid ids") from None
    result = run_ablation(dataset, settings, spec, out, limit=args.limit, progress=True,
                          seed=args.seed, answer_configs=answer_configs,
                          answer_limit=args.answer_limit, split=args.split, concurrency=args.concurrency,
                          force=args.force)
    print(render_summary(result))
    return 0


def _run_contextual(args, dataset, settings, spec, out, variants) -> int:
    from rag_lab.evaluate.ablation.contextual import CONTEXTUAL_FILE, run_contextual_ablation

    result = run_contextual_ablation(dataset, settings, spec, out, variants, limit=args.limit, progress=True,
                                     seed=args.seed, yes=args.yes, split=args.split, force=args.force)
    print(f"significance for this whole command: {result.family['text']}")
    for variant, run in result.runs.items():
        print(f"--- contextual: {variant}")
        print(render_summary(run, command_family=True))
    axis = result.axis
    if not axis.empty:
        shown = axis[axis["metric"].isin(sorted(axis["metric"].unique())[:4])]
        shown = shown.drop(columns=["family"], errors="ignore")
        print(f"--- contextual axis (each variant vs {variants[0]}, baseline configurations; marks in the "
              f"command's one family above; p_student_holm = exploratory, within each configuration × metric)")
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"wrote {out / CONTEXTUAL_FILE}")
    return 0


def render_summary(result, command_family: bool = False) -> str:
    """The CLI's summary of one ablation run; ``command_family``: the run's marks belong to a larger
    family the command printed once (``--contextual``), so the family sentence is not repeated."""
    from rag_lab.evaluate.ablation.significance import (family_summary, marked_set_text, tested_cut_off,
                                                        uncontrolled_rows)
    from rag_lab.evaluate.ablation.spot_check import spot_check_lines, with_live_marks
    from rag_lab.report.tables import best_rows, display, main_metric, significant_rows

    m = result.manifest
    check = m["spot_check"]
    metric = main_metric(result.results)
    split = f" of the {m['split']} split" if m.get("split", "all") != "all" else ""
    lines = [f"{m['dataset']}: {m['n_configs']} configurations × {m['n_queries']} questions{split} "
             f"(legs {m['timing']['legs_s']:.1f}s, grid {m['timing']['grid_s']:.1f}s, "
             f"metrics {m['timing']['metrics_s']:.1f}s, statistics {m['timing']['stats_s']:.1f}s)",
             *spot_check_lines(check, m["dataset"])]
    best = best_rows(result.results, metric)
    lines.append(with_live_marks(display(best), best, check).to_string(index=False))
    if "marked_set" in result.results:
        lines.append("significance: " + (f"marks in the command's one family (above); tested: {tested_cut_off(result.results)}"
                                         if command_family else marked_set_text(result.results))
                     + ". Exploratory per-family view (paired Student's t, Wilcoxon beside it; Holm within one axis "
                     "moved at the baseline's other settings, per mode × top-k × metric):")
    else:  # a run summarised before the marked set existed
        lines.append("significance: paired Student's t (Wilcoxon beside it), Holm-corrected within each family — one "
                     "axis moved at the baseline's other settings, per mode × top-k × metric:")
    lines += [f"  {line}" for line in family_summary(result.results)]
    significant = significant_rows(result.results[result.results["metric"] == metric], limit=20)
    tested = tested_cut_off(result.results)
    if len(significant):
        lines.append(f"significant on {tested} (family-wise error ≤ 0.05 over every row that can be marked; "
                     "largest |Δ| first):")
        lines.append(with_live_marks(display(significant), significant, check).to_string(index=False))
    else:
        lines.append(f"no configuration of the marked set ({tested}, one setting moved) differs significantly "
                     "from its baseline (family-wise error ≤ 0.05)")
    every = uncontrolled_rows(result.results, limit=len(result.results))
    elsewhere = every.head(10)
    if len(elsewhere):
        lines.append(f"not controlled — confirm with `tune`: {len(every)} row(s) outside the marked set "
                     "(another top-k or several settings moved) with an exploratory per-family Holm p < 0.05"
                     + (f"; the {len(elsewhere)} smallest p first" if len(every) > len(elsewhere) else ", smallest p first")
                     + ":")
        lines.append(with_live_marks(display(elsewhere), elsewhere, check).to_string(index=False))
    lines.append(f"wrote {result.run_dir}/ (results.csv, per_query.csv.gz, manifest.json); "
                 f"HTML: rag-lab report {result.run_dir} --out reports/{result.run_dir.name}.html")
    return "\n".join(lines)


def add_report(sub, common) -> None:
    p = sub.add_parser("report", help="one self-contained HTML report of a run folder")
    p.add_argument("run", help="a run folder, e.g. runs/<name>")
    p.add_argument("--out", "-o", "--output", dest="out", metavar="FILE", default=None,
                   help="HTML file (default reports/<run name>.html); -o and --output say the same")
    common(p)
    p.set_defaults(handler=run_report)


def run_report(args) -> int:
    from rag_lab.report.html import write_report

    out = Path(args.out or f"reports/{Path(args.run).name}.html")
    path = write_report(Path(args.run), out)
    print(f"wrote {path}", file=sys.stdout)
    return 0
