"""`rag-lab chat`: an interactive loop on stdin. The agent keeps the conversation (``reset``
clears it); the other modes answer each question on its own, through the evaluation adapter."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from rag_lab.cli.ask import ask_modes, render_answer, rerank_default
from rag_lab.cli.options import add_dataset_argument
from rag_lab.cli.settings import get_settings, positive_int
from rag_lab.errors import RagLabError

if TYPE_CHECKING:
    from rag_lab.config import Settings

EXIT_WORDS = ("exit", "quit")


def add_chat(sub, common) -> None:
    from rag_lab.retrieve.registry import retrieval_modes

    p = sub.add_parser("chat", help="chat about a dataset: cited answers per turn (agent mode keeps history)")
    add_dataset_argument(p, " (ignored by kendra)")
    p.add_argument("--mode", choices=ask_modes(), default="agent",
                   help="agent (the LLM searches and keeps the conversation) or one engine mode answering each "
                        f"turn on its own: {', '.join(retrieval_modes())} (default agent)")
    p.add_argument("--retrieval-mode", choices=retrieval_modes(), default="fusion",
                   help="the agent's retriever (default fusion)")
    p.add_argument("--top-k", type=positive_int, default=None,
                   help="chunks the retriever returns per query (agent: per search, default 5; engines: default 30)")
    p.add_argument("--max-tool-calls", type=int, default=None, help="searches per question (agent, default 3)")
    p.add_argument("--max-history", type=int, default=None, help="messages remembered (agent, default 20)")
    p.add_argument("--rerank", action=argparse.BooleanOptionalAction, default=None,
                   help="LLM rerank (engine modes only; default on with a remote provider, off with the local model)")
    common(p)
    p.set_defaults(handler=run_chat)


def _answerer(args, settings: Settings, llm: Any) -> tuple[Callable[[str], Any], Callable[[], None]]:
    """(ask, reset) for the chosen mode."""
    from rag_lab.datasets import resolve_dataset
    from rag_lab.retrieve.registry import is_agent, needs_dataset

    searched = args.retrieval_mode if is_agent(args.mode) else args.mode
    dataset = resolve_dataset(args.dataset, settings.datasets_dir) if needs_dataset(searched) else None
    if is_agent(args.mode):
        from rag_lab.answer.agent import RagAgent

        options = {k: v for k, v in (("top_k", args.top_k), ("max_tool_calls", args.max_tool_calls),
                                     ("max_history", args.max_history)) if v is not None}
        agent = RagAgent(settings, dataset, llm, retrieval_mode=args.retrieval_mode, **options)
        return agent.chat, agent.reset
    from rag_lab.answer import make_answerer

    params = {"top_k": args.top_k} if args.top_k is not None else {}
    answerer = make_answerer(args.mode, settings, dataset, rerank=rerank_default(args.rerank, settings), llm=llm,
                             **params)
    return answerer.query, lambda: None


def run_chat(args, *, settings: Settings | None = None, llm: Any = None,
             stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """The loop. ``settings``/``llm``/streams default to the configured ones (tests inject them)."""
    settings = settings or get_settings()
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    ask, reset = _answerer(args, settings, llm)
    interactive = stdin.isatty()
    from rag_lab.retrieve.registry import is_agent

    history = "reset clears the history, " if is_agent(args.mode) else "each question stands alone, "
    print(f"Chatting about {args.dataset} (mode {args.mode}): {history}exit or Ctrl-D ends.", file=out)
    while True:
        if interactive:
            print("\n> ", end="", file=out, flush=True)
        line = stdin.readline()
        if not line:  # EOF
            break
        text = line.strip()
        if not text:
            continue
        if not interactive:  # piped input: echo each question so the transcript reads as a dialogue
            print(f"\n> {text}", file=out, flush=True)
        if text.lower() in EXIT_WORDS:
            break
        if text.lower() == "reset":
            reset()
            print("(history cleared)", file=out)
            continue
        try:
            answer = ask(text)
        except (RagLabError, ValueError) as exc:  # one failed turn does not end the session
            print(f"error: {exc}", file=out)
            continue
        print(render_answer(answer), file=out, flush=True)
    return 0
