"""`rag-lab split DATASET`: write the dataset's declared dev split (``dev_split.txt``, see
:mod:`rag_lab.splits`): about a third of the judged questions, drawn per source document, seeded."""

from __future__ import annotations

from pathlib import Path

from rag_lab.cli.options import add_dataset_argument, resolve_dataset_arg


def add_split(sub, common) -> None:
    p = sub.add_parser("split", help="write a dataset's dev split (dev_split.txt): the questions tuning may look at")
    add_dataset_argument(p)
    p.add_argument("--fraction", type=float, default=1 / 3,
                   help="share of each source document's judged questions in the dev split (default 1/3)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the draw (default 0)")
    p.add_argument("--include", type=Path, default=None, metavar="FILE",
                   help="a file of ids (one a line) that must be in the dev split")
    from rag_lab.cli.options import add_questions_option

    add_questions_option(p)
    common(p)
    p.set_defaults(handler=run_split)


def run_split(args) -> int:
    from rag_lab.splits import choose_dev_split, read_id_file, write_dev_split

    from rag_lab.cli.options import with_questions_arg
    from rag_lab.evaluate.questions.question_set import refuse_second_split

    dataset = with_questions_arg(resolve_dataset_arg(args.dataset), args)
    refuse_second_split(dataset)
    pairs = [p for p in dataset.load_qa() if p.source_files]
    include = read_id_file(args.include) if args.include else frozenset()
    ids = choose_dev_split({p.id: p.source_files[0] for p in pairs}, fraction=args.fraction, seed=args.seed,
                           include=include)
    header = (f"Dev split of {dataset.name}: {len(ids)} of {len(pairs)} judged questions, about "
              f"{args.fraction:.2f} of each source document's questions, seed {args.seed}.\n"
              "Tuning (prompts, compression, retrieval levers) may use only these; reports leave them out or mark them.\n"
              f"Made by: rag-lab split {args.dataset} --fraction {args.fraction:.4g} --seed {args.seed}"
              + (f" --include {args.include}" if args.include else ""))
    path = write_dev_split(dataset.root, ids, header)
    print(f"{path}: {len(ids)} of {len(pairs)} questions")
    return 0
