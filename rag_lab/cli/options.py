"""Arguments and helpers shared by several sub-commands (the dataset argument, ``--ray``). Each
command module imports them from here, never from another command module, so the commands stay
leaves of one registry (:mod:`rag_lab.cli.commands`)."""

from __future__ import annotations

from rag_lab.cli.settings import get_settings, positive_int
from rag_lab.errors import ConfigError

DATASET_HELP = ("a dataset: a name under the datasets folder (RAG_LAB_DATASETS_DIR, default ./datasets) "
                "or a folder path")


def add_dataset_argument(p, extra: str = "") -> None:
    p.add_argument("dataset", help=DATASET_HELP + extra)


def resolve_dataset_arg(name: str):
    """The dataset a command's argument names (a name under the datasets folder, or a path)."""
    from rag_lab.datasets import resolve_dataset

    return resolve_dataset(name, get_settings().datasets_dir)


TOP_K_HELP = "chunks the retriever returns per query"  # one meaning of --top-k in every command
TOP_N_HELP = "chunks given to the LLM (default 7; kendra: all it retrieved)"


def add_force_option(p) -> None:
    """``--force``: write into an ``--out`` folder holding another run, after moving that run aside."""
    p.add_argument("--force", action="store_true",
                   help="when --out holds another run (another dataset or configuration), move it into a timestamped "
                        "sibling folder (<out>.moved-<UTC time>) first; nothing is deleted")


def add_json_option(p, what: str) -> None:
    """``--json [FILE]``: ``what`` as JSON on stdout (no FILE; the text output is left out), or into FILE."""
    p.add_argument("--json", nargs="?", const="-", default=None, metavar="FILE",
                   help=f"{what} as JSON: on stdout, or written to FILE (a .json path; --json=FILE for any name)")


def emit_json(target: str, data) -> None:
    """``--json``'s output: stdout for ``-``, else FILE (its folder made), with a note on stderr."""
    import json
    import sys
    from pathlib import Path

    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    if target == "-":
        print(text)
        return
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    Path(target).write_text(text + "\n", encoding="utf-8")
    print(f"wrote {target}", file=sys.stderr)


def add_ray_options(p, what: str) -> None:
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help=f"{what}: a local Ray instance, or the cluster at ADDRESS (auto, HOST:6379, "
                        "ray://HOST:10001); needs `pip install -e .[ray]`")
    p.add_argument("--ray-workers", type=positive_int, default=None, metavar="N",
                   help="with --ray: Ray actors (each loads its models once; default: one per CPU of the cluster)")


def ray_cluster(args):
    """``--ray [ADDRESS]`` / ``--ray-workers N`` as a :class:`RayCluster` (None without --ray)."""
    if args.ray is None:
        if args.ray_workers is not None:
            raise ValueError("--ray-workers needs --ray [ADDRESS]")
        return None
    from rag_lab.distributed.cluster import as_cluster

    return as_cluster(args.ray, args.ray_workers)


def ray_build_executor(args, settings):
    """``--ray``: the index build's parsing and embedding on Ray (None: in this process)."""
    cluster = ray_cluster(args)
    if cluster is None:
        return None
    from rag_lab.distributed.ingest import ray_executor

    return ray_executor(cluster, settings)


def ray_sample_executor(args):
    """``--ray``: a run's samples answered and scored on Ray actors (None: in this process)."""
    cluster = ray_cluster(args)
    if cluster is None:
        return None
    from rag_lab.distributed.samples import ray_sample_executor as on_ray

    return on_ray(cluster)


def add_split_option(p) -> None:
    """``--split``: the dataset's declared dev split (dev_split.txt), the other questions, or all."""
    from rag_lab.splits import SPLITS

    p.add_argument("--split", choices=SPLITS, default="all",
                   help="questions of the dataset's dev split (dev_split.txt: tuning looks only at these), the "
                        "rest (held out), or all (default)")
    p.add_argument("--dev-split", metavar="FILE", default=None,
                   help="with --split: the dev split's question ids from FILE, one a line (e.g. the split `rag-lab "
                        "tune` drew into its run folder) (default: the dataset folder's dev_split.txt)")


def add_questions_option(p) -> None:
    """``--questions human|synthetic|FILE``: the question set a command scores with (:mod:`rag_lab.evaluate.questions.question_set`)."""
    p.add_argument("--questions", default=None, metavar="human|synthetic|FILE",
                   help="the questions to score with: human (qa.jsonl, or a BEIR dataset's queries), synthetic "
                        "(qa.synthetic.jsonl, made by rag-lab synth) or a FILE of qa.jsonl lines (default: human when "
                        "the dataset has them, else synthetic)")


def with_questions_arg(dataset, args):
    """``dataset`` reading the questions ``--questions`` chooses (the default rule without the flag)."""
    from rag_lab.evaluate.questions.question_set import with_questions

    return with_questions(dataset, getattr(args, "questions", None))


def with_dev_split(dataset, args):
    """``dataset`` with ``--dev-split FILE`` as its dev split (unchanged without the flag)."""
    from rag_lab.datasets import with_dev_split_file

    return with_dev_split_file(dataset, getattr(args, "dev_split", None) or None)


# The grid flags of `ablate` and `tune` (comma-separated lists).
def parse_numbers(text: str, flag: str, kind=int) -> tuple:
    """A grid flag's comma-separated values (``--top-k 1,2,5``), in order, each once."""
    try:
        values = tuple(kind(v.strip()) for v in text.split(",") if v.strip())
    except ValueError:
        raise ConfigError(f"{flag} {text!r}: expected comma-separated {'whole numbers' if kind is int else 'numbers'}",
                          f"e.g. {flag} 1,2,5,10") from None
    if not values:
        raise ConfigError(f"{flag} is empty", f"e.g. {flag} 1,2,5,10")
    return tuple(dict.fromkeys(values))


def parse_weights(text: str) -> tuple[tuple[float, float], ...]:
    """``--weights 0.7:1.3,1:1``: (dense, sparse) weight pairs, in order, each once."""
    pairs = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            dense, sparse = (float(v) for v in part.split(":"))
        except ValueError:
            raise ConfigError(f"--weights {part!r}: expected DENSE:SPARSE", "e.g. --weights 0.7:1.3,1:1,1.3:0.7") from None
        pairs.append((dense, sparse))
    if not pairs:
        raise ConfigError("--weights is empty", "e.g. --weights 0.7:1.3,1:1,1.3:0.7")
    return tuple(dict.fromkeys(pairs))


def add_axis_options(p, defaults: dict[str, str] | None = None, helps: dict[str, str] | None = None) -> None:
    """One flag per axis of the lever table (``--fusion-k``, ``--prefetch`` …: comma-separated values,
    read by :func:`axis_flags`). ``defaults`` / ``helps``: a command's own default text / help by axis key
    (else the table's grid values and help)."""
    from rag_lab.retrieve.configuration import axes

    for axis in axes():
        default = (defaults or {}).get(axis.key) or ",".join(axis.text(v) for v in axis.grid_values)
        p.add_argument(f"--{axis.key.replace('_', '-')}", default=None,
                       help=f"{(helps or {}).get(axis.key, axis.help)} (default {default})")


def axis_flags(args, empty_is_default: bool = False) -> dict[str, tuple]:
    """The axis flags given (axis key → values; one clear error for a malformed value). ``empty_is_default``:
    an empty flag counts as not given (else it is refused)."""
    from rag_lab.retrieve.configuration import axes

    given = {}
    for axis in axes():
        text = getattr(args, axis.key, None)
        if text is None or (empty_is_default and not text):
            continue
        given[axis.key] = parse_weights(text) if axis.pair else parse_numbers(text, f"--{axis.key.replace('_', '-')}")
    return given
