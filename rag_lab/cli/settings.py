"""The CLI's access to settings, loaded on first use: importing ``rag_lab.config`` (pydantic-settings)
costs about a second, which ``rag-lab --help`` and argument errors must not pay."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag_lab.config import Settings


def get_settings() -> Settings:
    from rag_lab.config import get_settings as configured

    return configured()


def positive_int(text: str) -> int:
    """argparse ``type`` of counts (--top-k, --top-n, --limit, --prefetch): a whole number ≥ 1,
    refused at the command line (``--top-k 0`` would otherwise fail every sample later)."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be ≥ 1, got {value}")
    return value


def _at_least_zero(text: str, parse, what: str):
    import argparse
    import math

    try:
        value = parse(text)
    except ValueError:
        value = -1
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """argparse ``type`` of caps where 0 means off (--max-per-doc): a whole number ≥ 0."""
    return _at_least_zero(text, int, "a whole number ≥ 0 (0 = no cap)")


def non_negative_float(text: str) -> float:
    """argparse ``type`` of weights where 0 means off (--year-boost): a number ≥ 0."""
    return _at_least_zero(text, float, "a number ≥ 0 (0 = off)")


def add_config_option(parser) -> None:
    """``--config FILE``: a recommended configuration (``rag-lab tune``); flags given still win."""
    parser.add_argument("--config", metavar="FILE", default=None,
                        help="a recommended retrieval configuration (TOML written by `rag-lab tune`; keys as the "
                             "flags: mode, fusion_k, prefetch, dense_weight, sparse_weight, max_per_doc, top_k, top_n, "
                             "num_queries for LLM query rewrites); options given on the command line win")


def tuned_config(args):
    """The ``--config FILE`` configuration (read once per command), or None."""
    path = getattr(args, "config", None)
    if not path:
        return None
    if getattr(args, "_tuned_config", None) is None:
        from rag_lab.retrieve.tuned_config import read_tuned_config

        args._tuned_config = read_tuned_config(path)  # num_queries > 1: the live retrievers rewrite (retrieve/rewrites.py)
        if getattr(args, "contextual", "") in (None, "none"):  # the file's variant, unless --contextual names one
            args.contextual = args._tuned_config.contextual
    return args._tuned_config


def resolved_mode(args) -> str:
    """``--mode`` when given, else the ``--config`` file's mode, else the library's default (hybrid)."""
    from rag_lab.api import ASK_MODE

    config = tuned_config(args)
    return args.mode or (config.mode if config else ASK_MODE)


def announce_config(args, dataset: str | None) -> None:
    """With ``--config``: one stderr line naming the file and its levers, and a warning when it was
    tuned on another dataset (printed once per command)."""
    import sys

    config = tuned_config(args)
    if config is None or getattr(args, "_config_announced", False):
        return
    from rag_lab.retrieve.tuned_config import announce, warn_if_tuned_elsewhere

    print(announce(config, args.config), file=sys.stderr)
    warn_if_tuned_elsewhere(config, args.config, dataset)
    args._config_announced = True


def configured_modes(args, defaults) -> list[str]:
    """``ir``/``eval`` without ``--modes``: the ``--config`` file's mode, else every default mode."""
    config = tuned_config(args)
    return [config.mode] if config else list(defaults)
