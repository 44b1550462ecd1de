"""One reading of figures (rag_lab.evaluate.facts.figures) under key facts and the judge's numbers
rule, and one place that calls ranx."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rag_lab.evaluate.facts import figures
from rag_lab.evaluate.facts.key_facts import extract_key_facts, key_fact_recall, read_units
from rag_lab.evaluate.judge.numeric import missing_values, values_of

PACKAGE = Path(__file__).resolve().parents[2] / "rag_lab"


@pytest.mark.parametrize("words, value", [("twenty-four", 24), ("two hundred and five", 205), ("five thousand", 5000),
                                          ("one million two hundred thousand", 1_200_000), ("nineteen", 19)])
def test_number_words(words, value):
    assert figures.words_value(words) == value


@pytest.mark.parametrize("digits, scale, value", [("1.2", "million", 1_200_000), ("12", "K", 12_000),
                                                  ("3", "bn", 3_000_000_000), ("4,106", None, 4106),
                                                  ("five", "thousand", 5000)])
def test_scaled_amounts(digits, scale, value):
    assert figures.scaled_amount(digits, scale) == value


def test_exact_scaled_numbers_and_shares():
    assert figures.scaled_number("1.2", "Million") == "1200000"
    assert figures.scaled_number("0.1", "billion") == "100000000"
    assert figures.share("0.85") == figures.percent_share("85") == "share_0.85"
    assert figures.share("1.5") is None and figures.percent_share("100") is None


def test_fractions_as_percentages():
    assert figures.fractions_of("one half, two thirds and 1/4; 12/5 is no fraction") == [50.0, 66.67, 25.0]


@pytest.mark.parametrize("digits, year", [("1900", True), ("2099", True), ("2100", False), ("1899", False),
                                          ("02026", False), ("20.5", False)])
def test_one_year_bound(digits, year):
    assert figures.is_year(digits) is year


def test_key_facts_and_the_judge_read_a_scaled_amount_alike():
    """"$1.2 million" and "$1,200,000" are one amount to both."""
    assert values_of("$1.2 million") == values_of("$1,200,000") == {"money:1200000"}
    assert extract_key_facts(read_units("$1.2 million")) == extract_key_facts("$1,200,000") == {"dollar_1200000"}
    assert missing_values("It costs $1.2 million.", "The cost is $1,200,000.") == []
    assert key_fact_recall("It costs $1.2 million.", "The cost is $1,200,000.") == 1.0


def test_a_percentage_and_the_fraction_that_states_it():
    assert missing_values("Half of it, 50%.", "one half") == []
    assert key_fact_recall("about 0.85 of them", "85% of families") == 1.0


def test_only_the_ranx_module_calls_ranx():
    """Every ranx evaluate goes through rag_lab.evaluate.retrieval.ranx_ids.score_run (one "no result"
    marker, fixed-width ids, one reading of per-query scores); warm-up may build a Run to compile fusion."""
    callers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "ranx":
                names = {alias.name for alias in node.names}
                if names & {"evaluate", "Qrels"}:
                    callers.add(path.relative_to(PACKAGE).as_posix())
    assert callers == {"evaluate/retrieval/ranx_ids.py"}
