"""Every argument of every command says what it is, and one flag means one thing everywhere."""

from __future__ import annotations

import argparse

from rag_lab.cli.main import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_argument_has_help():
    missing = [f"{name} {action.dest}" for name, p in _commands().items() for action in p._actions
               if not isinstance(action, argparse._HelpAction) and action.help in (None, "", argparse.SUPPRESS)]
    assert not missing, f"arguments without help: {missing}"


def test_json_takes_an_optional_file_in_every_command():
    for name, p in _commands().items():
        for action in p._actions:
            if "--json" in action.option_strings:
                assert (action.nargs, action.const, action.metavar) == ("?", "-", "FILE"), name


def test_top_k_means_chunks_the_retriever_returns_everywhere():
    helps = {name: a.help for name, p in _commands().items() for a in p._actions if "--top-k" in a.option_strings}
    assert {"search", "ask", "chat", "eval", "ablate"} <= set(helps)
    for name, text in helps.items():
        assert "chunks the retriever returns" in text or "chunks the fused retriever returns" in text, (name, text)


def test_demo_help_names_every_step():
    text = _commands()["demo"].format_help()
    for step in ("index", "search", "IR table", "answered in every", "ablation grid", "HTML reports"):
        assert step in text, step


def test_mode_help_names_exactly_the_modes_the_flag_accepts():
    import re

    from rag_lab.retrieve import ALL_MODES, INDEX_MODES

    names = set(ALL_MODES) | {"sparse", "agent"}  # "sparse" and "agent" are not modes of these flags
    for command, flag, accepted in (("search", "--mode", ALL_MODES), ("ir", "--modes", INDEX_MODES)):
        [action] = [a for a in _commands()[command]._actions if flag in a.option_strings]
        listed = re.split(r"\(default", action.help)[0]
        named = {n for n in names if re.search(rf"(^|[ (,]){n}\b(?!-vector)", listed)}
        assert named == set(accepted), (command, named)
