"""The retrieval levers on the command line: one declaration of the flags ``search``, ``ir``, ``ask``
and ``eval`` share (``--fusion-k`` … ``--config``, ``--contextual``), and their reading into the
library's parameters (the flags are :class:`~rag_lab.retrieve.configuration.RetrievalConfig`'s fields)."""

from __future__ import annotations

from rag_lab.api import SEARCH_TOP_K
from rag_lab.cli.options import TOP_K_HELP
from rag_lab.cli.settings import add_config_option, non_negative_float, non_negative_int, positive_int, tuned_config


def add_contextual_option(p) -> None:
    """``--contextual``: query the contextual variant built by ``rag-lab index --contextual``."""
    p.add_argument("--contextual", choices=("none", "annotations", "llm", "both"), default="none",
                   help="use this contextual index variant (build it with `rag-lab index <dataset> --contextual ...`; "
                        "default none: the plain index)")


def add_retrieval_options(p) -> None:
    p.add_argument("--top-k", type=positive_int, default=None, help=f"{TOP_K_HELP} (default {SEARCH_TOP_K})")
    add_fusion_options(p)


def add_fusion_options(p) -> None:
    """The fused levers' flags, one per :class:`~rag_lab.retrieve.configuration.RetrievalConfig` field
    marked ``flag`` (name, type, default and help from the field), and ``--config``; shared by
    ``search``, ``ir``, ``ask`` and ``eval`` (read back by :func:`fusion_params`)."""
    from rag_lab.retrieve.configuration import lever_fields, lever_help

    for f in lever_fields():
        if f.metadata.get("flag", True):
            extra = {"metavar": f.metadata["metavar"]} if f.metadata.get("metavar") else {}
            p.add_argument(f"--{f.name.replace('_', '-')}", type=_flag_type(f), default=None, help=lever_help(f),
                           **extra)
    add_config_option(p)


def _flag_type(f):
    """How a lever's flag parses its text: the field's ``cli_type``, else its type (int, float, str)."""
    types = {"positive_int": positive_int, "non_negative_int": non_negative_int,
             "non_negative_float": non_negative_float, "int": int, "float": float, "str": str}
    named = f.metadata.get("cli_type") or str(f.type).split("|")[0].strip()
    return types.get(named, str)


def _given(args) -> dict:
    """The fused levers' flags as given (None: not given); a parser without one reads as not given."""
    from rag_lab.retrieve.configuration import flag_levers

    return {name: getattr(args, name, None) for name in flag_levers()}


def fusion_params(args) -> dict:
    """The options of :func:`add_fusion_options` as retriever parameters (left out = the default);
    ``--config FILE`` fills the ones not given."""
    from rag_lab.retrieve.tuned_config import fused_levers

    return fused_levers(tuned_config(args), **_given(args))


def retrieval_params(args, explain: bool = False) -> dict:
    config = tuned_config(args)
    top_k = args.top_k if args.top_k is not None or config is None else config.top_k
    return {"top_k": top_k, "explain": explain or None, **fusion_params(args)}


def answer_params(args) -> dict:
    """``ask``/``eval``: top-k, top-n, the fused levers and the contextual variant (``--config`` filling
    what is not given), as :func:`rag_lab.retrieve.tuned_config.answering_params` builds them for the API."""
    from rag_lab.retrieve.tuned_config import answering_params

    return answering_params(tuned_config(args), args.top_k, args.top_n, args.contextual, **_given(args))
