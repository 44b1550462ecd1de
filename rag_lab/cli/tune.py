"""`rag-lab tune`: a thin wrapper over rag_lab.evaluate.tune."""

from __future__ import annotations

from pathlib import Path

from rag_lab.cli.settings import get_settings, positive_int
from rag_lab.errors import ConfigError


def add_tune(sub, common) -> None:
    # the grid's defaults are TUNE_SPEC's (rag_lab.evaluate.tune.run), filled in when the command runs:
    # --help must not import the evaluation stack
    p = sub.add_parser("tune", help="choose a retrieval configuration on the dev split, confirm it on the rest, "
                                    "write it as a --config file (the default when the rest does not confirm it)")
    p.add_argument("dataset", help="a name under datasets/ or a folder path")
    p.add_argument("--metric", choices=("chunk_hit@5", "ndcg@10"), default=None,
                   help="selection metric (default chunk_hit@5 for Q&A datasets: the source document among the "
                        "first five chunks; nDCG@10 for BEIR qrels)")
    p.add_argument("--modes", default=None, help="fused modes (default fusion,hybrid)")
    from rag_lab.cli.options import add_axis_options
    from rag_lab.retrieve.configuration import axes

    add_axis_options(p, defaults={a.key: ",".join(a.text(v) for v in a.tune_values) for a in axes() if a.tune_values},
                     helps={"top_k": "chunks the fused retriever returns, the generator's context: values to try",
                            "weights": "dense:sparse leg weight pairs",
                            "max_per_doc": "per-document caps in the top-k, 0 = no cap"})
    p.add_argument("--out", default=None,
                   help="run folder (default runs/tune-<dataset>); a rerun of the same tune reuses its leg caches, "
                        "one holding another run (another dataset, metric, grid or seed) is refused unless --force")
    from rag_lab.cli.options import add_force_option

    add_force_option(p)
    p.add_argument("--config-out", default=None, metavar="FILE",
                   help="where the recommended configuration goes (default <run folder>/recommended.toml): the dev "
                        "pick when the rest split confirms it, else its mode's default")
    p.add_argument("--answers", type=int, default=0, metavar="N",
                   help="also answer N dev questions with the chosen, the best and the default configurations "
                        "(key-fact recall/precision; slow with the local model: its cost is printed first; default 0 = off)")
    p.add_argument("--answer-top", type=positive_int, default=3,
                   help="with --answers: configurations answered besides the default (default %(default)s)")
    p.add_argument("--concurrency", type=positive_int, default=None, metavar="N",
                   help="with --answers: answers in flight at once (default 1 for the local model, 8 for remote "
                        "providers)")
    p.add_argument("--num-queries", type=positive_int, default=1, metavar="N",
                   help="also try QueryFusionRetriever's LLM query generation: N queries (N − 1 rewrites by the "
                        "generator, one call per question) fused by RRF, for the chosen and best configurations; "
                        "kept only under the same one-SE rule as the dearest lever (default 1 = off)")
    p.add_argument("--write-split", action="store_true",
                   help="when a dev split is drawn, also write it into the dataset folder (dev_split.txt)")
    p.add_argument("--seed", type=int, default=42, help="seed of the bootstrap intervals (default %(default)s)")
    from rag_lab.cli.options import add_questions_option

    add_questions_option(p)
    common(p)
    p.set_defaults(handler=run_tune)


def run_tune(args) -> int:
    from dataclasses import replace

    from rag_lab.cli.options import axis_flags
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.tune import tune
    from rag_lab.evaluate.tune.report import render_tune
    from rag_lab.index import build_index

    from rag_lab.evaluate.tune.run import TUNE_SPEC as s

    settings = get_settings()
    try:
        spec = replace(s, modes=tuple(m.strip() for m in args.modes.split(",") if m.strip()) if args.modes else s.modes,
                       **axis_flags(args, empty_is_default=True))
    except ValueError as exc:
        raise ConfigError(str(exc), "fix the grid options (see rag-lab tune --help)") from None
    from rag_lab.cli.options import with_questions_arg

    dataset = with_questions_arg(resolve_dataset(args.dataset, settings.datasets_dir), args)
    build_index(dataset, settings)  # no-op when up to date
    out = Path(args.out or f"runs/tune-{dataset.name}")
    result = tune(dataset, settings, out, spec, metric=args.metric, answers=args.answers, answer_top=args.answer_top,
                  concurrency=args.concurrency, seed=args.seed, write_split=args.write_split,
                  config_path=args.config_out, progress=True, on_step=lambda m: print(f"· {m}", flush=True),
                  num_queries=args.num_queries, force=args.force)
    print(render_tune(result))
    return 0
