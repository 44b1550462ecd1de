"""The retrieval levers on the command line: one declaration of the flags ``search``, ``ir``, ``ask``
and ``eval`` share (``--fusion-k`` … ``--config``, ``--contextual``), and their reading into the
library's parameters (names: :mod:`rag_lab.retrieve.levers`)."""

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
    """The fused modes' parameters and ``--config``, shared by ``search``, ``ir``, ``ask`` and ``eval``
    (read back by :func:`fusion_params`)."""
    from rag_lab.retrieve.configuration import DEFAULTS as d

    p.add_argument("--fusion-k", type=int, default=None, help=f"RRF k, ranks from 1 (default {d.fusion_k:g})")
    p.add_argument("--prefetch", type=positive_int, default=None,
                   help=f"candidates per leg for fusion/hybrid (default {d.prefetch})")
    p.add_argument("--dense-weight", type=float, default=None,
                   help=f"fusion/hybrid: the dense leg's weight (default {d.dense_weight:g})")
    p.add_argument("--sparse-weight", type=float, default=None,
                   help=f"fusion/hybrid: the sparse leg's weight (default {d.sparse_weight:g})")
    p.add_argument("--max-per-doc", type=non_negative_int, default=None, metavar="M",
                   help="fusion/hybrid: at most M chunks per document in the top-k, the next-best chunks filling "
                        f"the gaps (default {d.max_per_doc} = no cap)")
    p.add_argument("--year-boost", type=non_negative_float, default=None, metavar="W",
                   help="fusion/hybrid: a result whose document (file name) carries a program year or legislature "
                        "the question names gains W × the first result's score (default off)")
    add_config_option(p)


def fusion_params(args) -> dict:
    """The options of :func:`add_fusion_options` as retriever parameters (left out = the default);
    ``--config FILE`` fills the ones not given."""
    from rag_lab.retrieve.levers import FUSED_LEVERS
    from rag_lab.retrieve.tuned_config import fused_levers

    return fused_levers(tuned_config(args), **{name: getattr(args, name) for name in FUSED_LEVERS})


def retrieval_params(args, explain: bool = False) -> dict:
    config = tuned_config(args)
    top_k = args.top_k if args.top_k is not None or config is None else config.top_k
    return {"top_k": top_k, "explain": explain or None, **fusion_params(args)}


def answer_params(args) -> dict:
    """``ask``/``eval``: top-k, top-n, the fused levers and the contextual variant (``--config`` filling
    what is not given), as :func:`rag_lab.retrieve.tuned_config.answering_params` builds them for the API."""
    from rag_lab.retrieve.levers import FUSED_LEVERS
    from rag_lab.retrieve.tuned_config import answering_params

    return answering_params(tuned_config(args), args.top_k, args.top_n, args.contextual,
                            **{name: getattr(args, name) for name in FUSED_LEVERS})

