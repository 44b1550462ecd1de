"""Query-focused compression: BM25 line selection, column projection, order and ids kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.answer.compress import (
    ELLIPSIS,
    PROSE_FLOOR,
    PROSE_WINDOW,
    compress_nodes,
    line_scores,
    project_row,
    select_lines,
)
from rag_lab.tokenizer import DomainTokenizer

QUESTION = "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"
INCOME = "Income Eligibility Limits | Family Size {n} | Annual: ${a} | Weekly: $9 | Bi-Monthly: $8 | Bi-Weekly: ${b}"


def _node(text: str, name: str = "a.pdf", score: float = 1.0) -> NodeWithScore:
    return NodeWithScore(node=TextNode(id_=name, text=text, metadata={"filename": name, "page": 1}), score=score)


def _table() -> str:
    rows = [INCOME.format(n=n, a=1000 * n, b=100 * n) for n in range(1, 8)]
    return "\n".join(["Income Eligibility Limits and Maximum Parent Share of Cost", "Board Contract Year 2026", *rows])


def test_the_matching_row_is_kept_and_cut_to_the_named_column():
    (node,), stats = compress_nodes([_node(_table())], QUESTION)
    assert node.node.get_content().splitlines() == [
        "Income Eligibility Limits and Maximum Parent Share of Cost",  # the title line always stays
        "Board Contract Year 2026",  # the title scores (income, maximum): its prose neighbour comes along
        ELLIPSIS,
        "Income Eligibility Limits | Family Size 5 | Bi-Weekly: $500",
        ELLIPSIS,
    ]
    assert stats.lines_before == 9 and stats.lines_kept == 3 and stats.chars_after < stats.chars_before


def test_ids_metadata_scores_and_order_are_kept_and_originals_untouched():
    nodes = [_node(_table(), "a.pdf", 0.9), _node("Nothing relevant here\nat all", "b.pdf", 0.5)]
    original = nodes[0].node.get_content()
    compressed, _ = compress_nodes(nodes, QUESTION)
    assert [(n.node.node_id, n.node.metadata["filename"], n.score) for n in compressed] == [
        ("a.pdf", "a.pdf", 0.9), ("b.pdf", "b.pdf", 0.5)]
    assert compressed[1].node.get_content() == f"Nothing relevant here\n{ELLIPSIS}"  # kept, as its title
    assert nodes[0].node.get_content() == original


def test_projection_keeps_the_best_named_columns_only():
    tokenizer = DomainTokenizer()
    row = INCOME.format(n=5, a=5000, b=500)
    terms = set(tokenizer("bi-weekly income"))
    assert project_row(row, terms, tokenizer) == "Income Eligibility Limits | Family Size 5 | Bi-Weekly: $500"
    # "weekly" names Weekly and Bi-Weekly equally (one shared term each): both stay
    assert project_row(row, set(tokenizer("weekly")), tokenizer) == (
        "Income Eligibility Limits | Family Size 5 | Weekly: $9 | Bi-Weekly: $500")
    assert project_row(row, set(tokenizer("family of five")), tokenizer) == row  # no column named
    assert project_row("plain text line", terms, tokenizer) == "plain text line"


def test_selection_rules_per_kind_cap_and_prose_neighbours():
    assert (PROSE_FLOOR, PROSE_WINDOW) == (0.3, 2)
    #                 prose -----------------------------  table A ---  table B -
    scores = np.array([0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 2.0, 9.0, 6.0, 9.0, 3.0, 3.0])
    tables = [None] * 7 + ["A", "A", "A", "B", "B"]
    chunk_of = [0] * 12
    # prose: 10 is kept with two prose neighbours each side; 2.0 is under 0.3 × 10
    # rows: each table's best rows, ties kept (A: 7 and 9; B: 10 and 11), whatever their level
    assert select_lines(scores, tables, chunk_of, max_lines=12) == {0, 1, 2, 3, 4, 7, 9, 10, 11}
    # the cap applies to prose lines and to rows separately
    assert select_lines(np.array([5.0, 4.0, 0.0, 0.0, 0.0, 0.0, 4.0, 5.0]), [None] * 6 + ["A", "B"],
                        [0] * 6 + [1] * 2, max_lines=1) == {0, 1, 2, 7}
    # a neighbour in another chunk is not taken; nothing scoring 0 is kept
    assert select_lines(np.array([0.0, 5.0]), [None, None], [0, 1], 12) == {1}
    assert select_lines(np.zeros(3), [None, "A", "A"], [0, 0, 0], 12) == set()


def test_bm25_scores_rank_the_line_with_the_rare_question_term_first():
    lines = ["family size 4 income", "family size 5 income", "unrelated words"]
    scores = line_scores("income for a family of 5", lines)
    assert scores.argmax() == 1 and scores[2] == 0.0 and scores[1] > scores[0] > 0


def test_a_question_without_terms_keeps_only_titles():
    (node,), stats = compress_nodes([_node("Title\nline two\nline three")], "the of and")
    assert node.node.get_content() == f"Title\n{ELLIPSIS}" and stats.lines_kept == 1


def test_rows_without_a_caption_compete_as_one_table():
    rows = "\n".join(f"Family Size {n} | Annual: ${n}000 | Bi-Weekly: ${n}00" for n in range(1, 6))
    (node,), _ = compress_nodes([_node(f"Limits\n{rows}")], "bi-weekly amount for a family of 4")
    assert node.node.get_content() == f"Limits\n{ELLIPSIS}\nFamily Size 4 | Bi-Weekly: $400\n{ELLIPSIS}"


# --- two chunks of one caption ("Alamo-20") are two tables, not one ---------
RATES = Path(__file__).resolve().parents[2] / "datasets" / "texas_childcare_full" / "pdfs"
BCY26, BCY25 = "bcy26-board-max-provider-payment-rates-twc.pdf", "bcy25-board-max-provider-payment-rates-4-age-groups-twc.pdf"


@pytest.fixture(scope="module")
def alamo_chunks(tmp_path_factory) -> dict[str, NodeWithScore]:
    """The first "Alamo-20" chunk of the BCY26 and of the BCY25 board-rate PDFs, as the ingester makes them."""
    import pdfplumber

    from rag_lab.ingest import chunk_documents, load_folder
    from rag_lab.ingest.loaders import PARSER_VERSION
    from rag_lab.ingest.parse_cache import ParseCache, file_hash
    from rag_lab.ingest.tables import page_text

    folder = tmp_path_factory.mktemp("rates")
    # Only page 1 (the Alamo-20 board's rates) of each 28-page PDF, by the ingester's own page parser,
    # handed to load_folder through its parse cache: the other boards' pages took ~35 CPU s on a fresh
    # clone and change no chunk of page 1 (a document per page; chunks never span pages).
    cache = ParseCache(folder / "parsed.sqlite")
    for name in (BCY26, BCY25):
        shutil.copy(RATES / name, folder / name)
        with pdfplumber.open(folder / name) as pdf:
            cache.put(file_hash(folder / name), PARSER_VERSION, [page_text(pdf.pages[0])])
    documents, _ = load_folder(folder, parse_cache=cache, exclude=[folder / "parsed.sqlite"])
    first: dict[str, NodeWithScore] = {}
    for node in chunk_documents(documents, 500, 0):
        if "Alamo-20 | Provider Type LCCC" in node.get_content():
            first.setdefault(node.metadata["filename"], NodeWithScore(node=node, score=1.0))
    assert set(first) == {BCY26, BCY25}
    return first


@pytest.mark.parametrize("order", [(BCY26, BCY25), (BCY25, BCY26)])
def test_each_chunk_keeps_its_own_best_rows(alamo_chunks, order):
    # Before, rows were grouped by caption over all chunks: the BCY25 rows outscored BCY26's and the BCY26
    # chunk kept only its title lines ("Board Contract Year 2026 …", "Alamo-20"), i.e. not the answer.
    question = "What is the BCY 2026 payment rate for a TRS2-rated Licensed Child Care Center in Alamo-20?"
    compressed, _ = compress_nodes([alamo_chunks[name] for name in order], question)
    kept = {node.node.metadata["filename"]: node.node.get_content().splitlines() for node in compressed}
    rows_26 = [line for line in kept[BCY26] if line.startswith("Alamo-20 | Provider Type")]
    assert rows_26 and all("Provider Rating: TRS2" in line for line in rows_26)
    assert any(line.startswith("Alamo-20 | Provider Type LCCC | Provider Rating: TRS2") for line in rows_26)


def test_a_table_whose_rows_all_tie_can_be_left_out():
    # a table of 3 rows tying at its best (no record picked) and one with a single best row
    scores = np.array([4.0, 4.0, 4.0, 6.0, 2.0])
    tables = ["A", "A", "A", "B", "B"]
    assert select_lines(scores, tables, [0] * 5, 12) == {0, 1, 2, 3}  # the shipped rule: no limit (measured, kept)
    assert select_lines(scores, tables, [0] * 5, 12, max_tied_rows=2) == {3}
    assert select_lines(scores, tables, [0] * 5, 12, max_tied_rows=3) == {0, 1, 2, 3}


def test_a_tied_rows_limit_is_part_of_the_cached_answers_rule():
    # RULE enters the answer cache key: a limit set in MAX_TIED_ROWS must not be served answers compressed without it
    from rag_lab.answer.compress import MAX_TIED_ROWS, RULE, compression_rule

    assert RULE == compression_rule(MAX_TIED_ROWS)
    assert compression_rule(None) != compression_rule(3) != compression_rule(5)
