"""Every argument of every command says what it is, and one flag means one thing everywhere."""

from __future__ import annotations

import argparse
from fractions import Fraction

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


def _shown_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The action's help as --help prints it (``%(default)s`` and the like filled in)."""
    return parser._get_formatter()._expand_help(action)


def test_every_option_with_a_default_states_it_in_help():
    """A flag whose value is used when it is not given says which value that is (a switch's default is
    "not given"; None means the command works it out, and the help says how)."""
    missing = []
    for name, p in _commands().items():
        for action in p._actions:
            if (not action.option_strings or action.default in (None, argparse.SUPPRESS)
                    or isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction,
                                           argparse._HelpAction))):
                continue
            text = _shown_help(p, action)
            value = ",".join(map(str, action.default)) if isinstance(action.default, (list, tuple)) else str(action.default)
            shown = {value}
            if isinstance(action.default, float):  # 1/3 may be written as a fraction
                shown |= {f"{action.default:g}", str(Fraction(action.default).limit_denominator(100))}
            if "default" not in text or not any(v in text for v in shown):
                missing.append(f"{name} {'/'.join(action.option_strings)} (default {value!r}): {text!r}")
    assert not missing, "options whose --help does not state their default:\n" + "\n".join(missing)


def test_report_writes_with_out_and_keeps_o_and_output_as_aliases():
    parser = build_parser()
    for flag in ("--out", "-o", "--output"):
        assert parser.parse_args(["report", "runs/x", flag, "r.html"]).out == "r.html", flag


def test_ablate_contextual_lists_its_choices():
    [action] = [a for a in _commands()["ablate"]._actions if "--contextual" in a.option_strings]
    for variant in ("none", "annotations", "llm", "both"):
        assert variant in action.help
    parser = build_parser()
    assert parser.parse_args(["ablate", "texas_childcare", "--contextual", "none,llm"]).contextual == "none,llm"
