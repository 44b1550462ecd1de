"""`rag-lab ask`: a cited answer from one mode (the evaluation adapter, so what you see here is
exactly what the evaluation scores)."""

from __future__ import annotations

import argparse
import json
import sys

from typing import TYPE_CHECKING

from rag_lab.cli.options import TOP_K_HELP, TOP_N_HELP, add_dataset_argument, add_json_option, emit_json
from rag_lab.cli.settings import get_settings, positive_int

if TYPE_CHECKING:
    from llama_index.core.schema import NodeWithScore

    from rag_lab.answer.types import Answer, Chunk

def ask_modes() -> tuple[str, ...]:
    """Every retrieval mode (:mod:`rag_lab.retrieve.registry`) and the agent."""
    from rag_lab.retrieve.registry import retrieval_modes

    return (*retrieval_modes(), "agent")


def add_ask(sub, common) -> None:
    from rag_lab.retrieve.registry import describe_modes

    p = sub.add_parser("ask", help="answer a question with cited sources")
    add_dataset_argument(p, " (ignored by kendra)")
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--mode", choices=ask_modes(), default=None,
                   help=f"how the chunks are found: {describe_modes()}, or agent (the LLM searches, up to 3 times) "
                        "(default hybrid, or the --config file's mode)")
    p.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                   help="LLM rerank of the retrieved chunks (default: on with a remote LLM provider, off with "
                        "the local model: its listwise JSON rerank costs one more long prompt on CPU and lowered nDCG@10 "
                        "in benchmarks/rerank_quality.py; never for kendra)")
    p.add_argument("--explain", action="store_true", help="show the chunks given to the LLM, with fusion explanations")
    add_json_option(p, "the Answer")
    p.add_argument("--top-k", type=positive_int, default=None,
                   help=f"{TOP_K_HELP} (default 30; agent: per search, default 5; kendra: KENDRA_TOP_K, default 5)")
    p.add_argument("--top-n", type=positive_int, default=None, help=TOP_N_HELP)
    from rag_lab.cli.levers import add_contextual_option, add_fusion_options

    add_fusion_options(p)
    add_contextual_option(p)
    add_answer_style_option(p)
    common(p)
    p.set_defaults(handler=run_ask)


# rag_lab.config.ANSWER_STYLES, repeated: the command line parses before the settings module is imported
ANSWER_STYLES = ("auto", "evidence", "free")


def add_answer_style_option(p) -> None:
    p.add_argument("--answer-style", choices=ANSWER_STYLES, default=None,
                   help="evidence: answer from a few selected lines, figures only as they state them, each cited "
                        "to its line; free: a free-form answer from the chunks; auto: evidence for the local "
                        "model, free for cloud providers (default: RAG_LAB_ANSWER_STYLE, else auto)")


def with_answer_style(settings, style: str | None):
    """``settings`` with ``--answer-style`` applied (unchanged when the flag is not given)."""
    from rag_lab.config import with_answer_style as applied

    return applied(settings, style)


def run_ask(args) -> int:
    from rag_lab.answer import make_answerer
    from rag_lab.cli.options import resolve_dataset_arg

    from rag_lab.cli.levers import answer_params
    from rag_lab.cli.settings import announce_config, resolved_mode
    from rag_lab.retrieve.registry import is_agent, needs_dataset

    settings = with_answer_style(get_settings(), args.answer_style)
    args.mode = resolved_mode(args)
    if args.config and (is_agent(args.mode) or not needs_dataset(args.mode)):  # they take no fused-retrieval settings
        print(f"config {args.config}: not applied, {args.mode} takes no fused-retrieval settings", file=sys.stderr)
        args.config = None
    dataset = resolve_dataset_arg(args.dataset) if needs_dataset(args.mode) else None
    announce_config(args, dataset.name if dataset else None)
    params = answer_params(args)
    answerer = make_answerer(args.mode, settings, dataset, rerank=rerank_default(args.rerank, settings),
                             explain=args.explain, **params)
    answer = answerer.query(args.question)
    if args.json:
        emit_json(args.json, answer.to_dict())
    if args.json != "-":
        print(render_answer(answer, explain=args.explain))
    return 0


def rerank_default(flag: bool | None, settings) -> bool:
    """``--rerank``/``--no-rerank`` when given; otherwise the library's default
    (:func:`rag_lab.answer.engine.default_rerank`: on for remote providers, off for the local model)."""
    from rag_lab.answer.engine import default_rerank

    return flag if flag is not None else default_rerank(settings)


def render_answer(answer: Answer, explain: bool = False) -> str:
    """The answer, its sources, one status line, and (explain) the chunks the LLM saw."""
    from rag_lab.cli.render import render_results

    lines = [answer.answer or "(empty answer)", "", "Sources:"]
    for source in answer.sources:
        page = f", page {source.page}" if source.page is not None else ""
        url = f" <{source.url}>" if source.url else ""
        lines.append(f"  - {source.doc}{page}{url}")
    if not answer.sources:
        lines.append("  (none)")
    u = answer.usage
    status = [f"mode {answer.mode}", f"{answer.response_time:.1f} s",
              f"{u.get('total_tokens', 0)} tokens in {u.get('calls', 0)} LLM call(s)"]
    if answer.rerank is not None:
        status.insert(1, answer.rerank.describe())
    status[1:1] = [_describe_search(call) for call in answer.tool_calls]  # the agent's searches, in order
    lines += ["", "(" + " · ".join(status) + ")"]
    if explain:
        lines += ["", "Chunks given to the LLM ([Doc N] = rank N):",
                  render_results(_as_nodes(answer.chunks), explain=True)]
    return "\n".join(lines)


def _describe_search(call: dict) -> str:
    if call["query"] is None:
        return "search refused (limit reached)"
    query = json.dumps(call["query"], ensure_ascii=False)
    return f"searched {query}" + (" (the model's query was unusable)" if call["fallback"] else "")


def _as_nodes(chunks: list[Chunk]) -> list[NodeWithScore]:
    # render_results works on nodes; rebuild minimal ones so the search view is reused as is.
    from llama_index.core.schema import NodeWithScore, TextNode

    nodes = []
    for c in chunks:
        meta = {"filename": c.filename, "page": c.page, **({"explanation": c.explanation} if c.explanation else {})}
        nodes.append(NodeWithScore(node=TextNode(text=c.text, metadata=meta), score=c.score or 0.0))
    return nodes
