"""`rag-lab synth DATASET [--n 100] [--seed 0] [--out FILE]`: questions made from a dataset's chunks
(:mod:`rag_lab.evaluate.questions`), for a corpus that comes without any."""

from __future__ import annotations

from rag_lab.cli.options import add_dataset_argument, resolve_dataset_arg
from rag_lab.cli.settings import get_settings, positive_int


def add_synth(sub, common) -> None:
    from rag_lab.evaluate.questions.kinds import KINDS

    p = sub.add_parser("synth", help="make checked questions from a dataset's chunks (qa.synthetic.jsonl), "
                                     "for ir/eval/ablate/tune --questions synthetic")
    add_dataset_argument(p)
    p.add_argument("--n", type=positive_int, default=100, help="questions to make (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the chunks' draw, spread over documents (default 0)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="where to write them (default: qa.synthetic.jsonl in the dataset's folder; never qa.jsonl)")
    p.add_argument("--kinds", default=None, metavar="K1,K2",
                   help=f"question kinds, among {', '.join(KINDS)} (default: claims where the human questions are "
                        "claims, else figure,rule,yes_no,definition)")
    p.add_argument("--dry-run", action="store_true", help="print the LLM calls, time and cost it would take; call nothing")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD",
                   help="stop before the cost (list prices, rag_lab/models/pricing.py) would pass USD; what was made is kept")
    common(p)
    p.set_defaults(handler=run_synth)


def run_synth(args) -> int:
    from rag_lab.evaluate.questions import synth

    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip()) if args.kinds is not None else None
    result = synth(resolve_dataset_arg(args.dataset), get_settings(), n=args.n, seed=args.seed, out=args.out,
                   kinds=kinds, dry_run=args.dry_run, max_cost=args.max_cost)
    if args.dry_run:
        print(result.summary())
        return 0
    from rag_lab.evaluate.questions.records import summary_path

    print(f"{result.line()}\nwrote {result.out} (summary: {summary_path(result.out)})")
    print(f"use them: rag-lab ir {args.dataset} --questions {'synthetic' if args.out is None else result.out}")
    return 0
