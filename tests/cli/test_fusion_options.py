"""``search``, ``ir``, ``ask`` and ``eval`` take the same fused-mode options and read them into the same
retriever parameters (one declaration: a new option reaches every command)."""

from __future__ import annotations

import pytest

from rag_lab.cli.levers import fusion_params, retrieval_params
from rag_lab.cli.main import build_parser

FLAGS = ["--fusion-k", "20", "--prefetch", "40", "--dense-weight", "0.7", "--sparse-weight", "1.3",
         "--max-per-doc", "2", "--year-boost", "0.5"]
EXPECTED = {"fusion_k": 20, "prefetch": 40, "dense_weight": 0.7, "sparse_weight": 1.3, "max_per_doc": 2, "year_boost": 0.5}


@pytest.mark.parametrize("argv", [["search", "pets", "cats", *FLAGS], ["ir", "pets", *FLAGS],
                                  ["ask", "pets", "cats", *FLAGS], ["eval", "pets", *FLAGS]])
def test_every_command_reads_every_fused_mode_option(argv):
    assert fusion_params(build_parser().parse_args(argv)) == EXPECTED


@pytest.mark.parametrize("command", [["ask", "pets", "cats"], ["eval", "pets"]])
def test_ask_and_eval_add_top_k_top_n_and_the_contextual_variant(command):
    from rag_lab.cli.levers import answer_params

    args = build_parser().parse_args([*command, "--top-k", "9", "--top-n", "4", "--contextual", "annotations", *FLAGS])
    assert answer_params(args) == {"top_k": 9, "top_n": 4, "contextual": "annotations", **EXPECTED}
    assert answer_params(build_parser().parse_args(command)) == {}  # nothing given: the library's defaults


def test_search_adds_its_own_top_k_and_explain():
    args = build_parser().parse_args(["search", "pets", "cats", "--top-k", "3", "--explain", *FLAGS])
    assert retrieval_params(args, explain=True) == {"top_k": 3, "explain": True, **EXPECTED}


def test_unset_options_and_a_zero_cap_are_the_defaults():
    # None = the retriever's default; --max-per-doc 0 (off) is the same run and IR checkpoint as no flag
    for argv in (["ir", "pets"], ["ir", "pets", "--max-per-doc", "0"]):
        assert fusion_params(build_parser().parse_args(argv)) == {}


@pytest.mark.parametrize("flag, value, expected", [
    ("--year-boost", "-0.5", "expected a number ≥ 0 (0 = off), got '-0.5'"),
    ("--year-boost", "nan", "expected a number ≥ 0 (0 = off), got 'nan'"),
    ("--max-per-doc", "-1", "expected a whole number ≥ 0 (0 = no cap), got '-1'"),
])
@pytest.mark.parametrize("command", [["search", "pets", "cats", "--mode", "bm25"], ["ir", "pets", "--modes", "bm25"]])
def test_a_negative_boost_or_cap_is_refused_at_the_command_line(command, flag, value, expected, capsys):
    # before: --year-boost -0.5 passed argparse and was dropped for bm25 (or failed after the index was opened)
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([*command, flag, value])
    assert exit_info.value.code == 2
    assert f"argument {flag}: {expected}" in capsys.readouterr().err
