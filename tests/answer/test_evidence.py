"""Evidence chosen line by line (rag_lab.answer.evidence) and figures held to it (rag_lab.answer.figures)."""

from __future__ import annotations

import json
import re

import numpy as np
from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.answer.evidence import line_units, select_evidence
from rag_lab.answer.evidence_answer import answer_from_evidence, checked_answer, evidence_schema
from rag_lab.answer.figures import check_answer, cite_figures, figure_pattern, unsupported
from tests.answer.conftest import INCOME_FILE, INCOME_QUESTION, ScriptedLLM

# Lines as the PDF parser writes the BCY 2026 income page and the parent-share page (texas_childcare).
INCOME_PAGE = """BCY 2026 Income Eligibility Limits and Maximum Parent Share of Cost
Effective October 1, 2025, the income limits below apply to families applying for child care
services. Families must have a gross income at or below 85% of the State Median
Income (SMI).
Income Eligibility Limits | Family Size 4 | Annual: $92,041 | Monthly: $7,670 | Weekly: $1,770 | Bi-Monthly: $3,835 | Bi-Weekly: $3,540
Income Eligibility Limits | Family Size 5 | Annual: $106,768 | Monthly: $8,897 | Weekly: $2,053 | Bi-Monthly: $4,449 | Bi-Weekly: $4,106
Income Eligibility Limits | Family Size 6 | Annual: $121,496 | Monthly: $10,125 | Weekly: $2,336 | Bi-Monthly: $5,062 | Bi-Weekly: $4,673"""
SHARE_PAGE = """Maximum Parent Share of Cost
Maximum Parent Share of Cost | Family Size 5 | Monthly: $622 | Bi-Weekly: $287
Maximum Parent Share of Cost | Family Size 7 | Monthly: $760 | Bi-Weekly: $351
Maximum Parent Share of Cost | Family Size 8 | Monthly: $829 | Bi-Weekly: $383"""
# A table the parser did not detect: bare rows of figures under their header line.
BARE_TABLE = """Children served by age group
Age group Infants Toddlers Preschool School-age
2024 12,410 18,233 40,118 55,902
2025 13,015 19,002 41,667 57,340"""


def node(text: str, filename: str, page: int = 1) -> NodeWithScore:
    return NodeWithScore(node=TextNode(id_=f"{filename}-{page}", text=text,
                                       metadata={"filename": filename, "doc_id": filename, "page": page}), score=1.0)


CHUNKS = [node(SHARE_PAGE, "bcy-26-psoc-chart-twc.pdf", 2), node(INCOME_PAGE, INCOME_FILE, 1)]


def test_the_table_row_a_question_asks_for_is_selected_first_with_its_caption():
    evidence = select_evidence(CHUNKS, INCOME_QUESTION, max_units=2)
    # the two family-size-5 rows (both name "maximum" or "income", "family size 5" and "bi-weekly"),
    # not the other family sizes of either table: the model reads both and copies the one asked for
    assert {(item.doc, item.first) for item in evidence} == {(2, 6), (1, 2)}
    row = next(item for item in evidence if item.doc == 2)
    assert row.text.startswith("Income Eligibility Limits | Family Size 5") and "Bi-Weekly: $4,106" in row.text
    assert row.citation() == "[Doc 2, line 6]"
    # other questions pick other rows of the same tables
    share = select_evidence(CHUNKS, "What is the maximum bi-weekly parent share of cost for a family of 8?", 1)[0]
    assert "Family Size 8" in share.text and "$383" in share.text


def test_a_bare_table_row_carries_its_header_and_a_broken_sentence_is_rejoined():
    units = line_units(BARE_TABLE.splitlines(), doc=1)
    assert units[2].text == "Age group Infants Toddlers Preschool School-age | 2024 12,410 18,233 40,118 55,902"
    income = line_units(INCOME_PAGE.splitlines(), doc=1)
    # line 3 ends mid-sentence: its window runs to "Income (SMI)." on line 4, and back to line 2's start
    window = income[2]
    assert (window.first, window.last) == (1, 3)
    assert window.text.endswith("at or below 85% of the State Median Income (SMI).")
    # "Income (SMI)." alone says nothing: its window reaches back to the line its sentence is on
    assert (income[3].first, income[3].last) == (2, 3) and "gross income at or below 85%" in income[3].text


class PreferringEmbedding:
    """An embedding model that puts every text holding ``word`` close to the question."""

    def __init__(self, word: str) -> None:
        self.word = word

    def get_query_embedding(self, query: str) -> list[float]:
        return [1.0, 0.0]

    def get_text_embedding_batch(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] if self.word in text else [0.0, 1.0] for text in texts]


def test_the_dense_scores_are_fused_with_bm25():
    question = "How many children were served?"
    bm25_only = select_evidence([node(BARE_TABLE, "served.pdf")], question, 2)
    fused = select_evidence([node(BARE_TABLE, "served.pdf")], question, 2,
                            embed_model=PreferringEmbedding("2025"))
    assert not any("2025 13,015" in item.text for item in bm25_only)
    assert "2025 13,015" in fused[1].text  # the dense leg lifted the row it prefers over the 2024 row


def test_an_invented_figure_is_rebuilt_from_the_evidence_and_a_copied_one_stays_cited():
    evidence = select_evidence(CHUNKS, INCOME_QUESTION, max_units=3)
    copied = "The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,106."
    assert unsupported(copied, evidence, INCOME_QUESTION) == []
    assert check_answer(copied, evidence, INCOME_QUESTION) == (copied, False)
    [citation] = cite_figures(copied, evidence, INCOME_QUESTION)  # "5" and "2026" are the question's
    assert (citation.figure, citation.doc, citation.first_line) == ("dollar_4106", 2, 6)
    invented = "A family of 5 may earn up to $86,010 per month."
    assert unsupported(invented, evidence, INCOME_QUESTION) == ["dollar_86010"]
    row = next(item for item in evidence if item.doc == 2)
    rebuilt, changed = check_answer(invented, evidence, INCOME_QUESTION, fallback=[row])
    assert changed and "$86,010" not in rebuilt
    assert rebuilt == f"“{row.text}” [Doc 2, line 6]"


def test_the_figure_pattern_admits_only_the_evidence_figures():
    pattern = re.compile(figure_pattern([INCOME_QUESTION, INCOME_PAGE]))
    assert pattern.fullmatch("The limit for a family of 5 in BCY 2026 is $4,106 bi-weekly.")
    assert pattern.fullmatch("Families may earn up to 85% of the SMI.")
    assert not pattern.fullmatch("The limit is $86,010 per month.")
    assert not pattern.fullmatch("The limit is $4,107.")
    assert not pattern.fullmatch('He said "yes"')  # no quote: the answer needs no JSON escaping
    schema = evidence_schema(select_evidence(CHUNKS, INCOME_QUESTION, 2), INCOME_QUESTION)
    assert schema["properties"]["lines"]["items"]["maximum"] == 2


def test_the_engine_answer_keeps_a_copied_figure_with_its_line_and_rebuilds_an_invented_one():
    def reply(answer: str, lines: list[int]) -> ScriptedLLM:
        return ScriptedLLM(script=json.dumps({"answer": answer, "lines": lines}))

    evidence = select_evidence(CHUNKS, INCOME_QUESTION)
    row = 1 + next(n for n, item in enumerate(evidence) if item.doc == 2 and item.first == 6)
    good = answer_from_evidence(reply("The bi-weekly limit for a family of 5 is $4,106.", [row]), INCOME_QUESTION, CHUNKS)
    assert not good.rebuilt
    assert good.text.startswith("The bi-weekly limit for a family of 5 is $4,106.")
    assert f"[Doc 2: {INCOME_FILE}, Page 1, line 6]" in good.text  # the cited line, quoted with its citation
    assert ("dollar_4106", 2, 6) in [(c.figure, c.doc, c.first_line) for c in good.figure_citations]
    bad = answer_from_evidence(reply("The limit is $5,000 a month.", [row]), INCOME_QUESTION, CHUNKS)
    assert bad.rebuilt and "$5,000" not in bad.text and "Bi-Weekly: $4,106" in bad.text
    assert bad.text.startswith("“Income Eligibility Limits | Family Size 5")


def test_an_agent_answer_is_checked_against_every_line_it_read():
    kept = checked_answer("A family of 6 may earn $4,673 bi-weekly [Doc 2].", "income limit family of 6", CHUNKS)
    assert not kept.rebuilt and kept.text.startswith("A family of 6 may earn $4,673")
    invented = checked_answer("The limit is $9,999.", INCOME_QUESTION, CHUNKS)
    assert invented.rebuilt and "$9,999" not in invented.text


def test_dense_scores_are_cosines():
    from rag_lab.answer.evidence import dense_scores

    scores = dense_scores("q", ["a 2025", "b"], PreferringEmbedding("2025"))
    assert np.allclose(scores, [1.0, 0.0])


def test_citing_every_line_quotes_no_more_than_max_quoted_lines_and_scores_no_free_recall():
    """The quoted part under the sentence is the lines that state its figures (or, stating none, that the
    model cited), at most MAX_QUOTED: a reply citing every figure-rich line cannot turn the answer into a
    dump of the evidence, and the key-fact scores read the sentence, not the quoted rows."""
    from rag_lab.answer.evidence_answer import MAX_QUOTED
    from rag_lab.evaluate.facts.key_facts import key_fact_precision, key_fact_recall

    evidence = select_evidence(CHUNKS, INCOME_QUESTION, max_units=8)
    assert len(evidence) > MAX_QUOTED
    everything = ScriptedLLM(script=json.dumps({"answer": "The limits are in these tables.",
                                                "lines": list(range(1, len(evidence) + 1))}))
    answer = answer_from_evidence(everything, INCOME_QUESTION, CHUNKS, max_units=8)
    quoted = [line for line in answer.text.splitlines() if line.startswith("“")]
    assert len(quoted) == MAX_QUOTED
    assert all(any(item.text in line for item in evidence[:MAX_QUOTED]) for line in quoted)
    reference = "The maximum bi-weekly income for a family of 5 in BCY 2026 is $4,106."
    assert key_fact_recall(answer.text, reference, INCOME_QUESTION) == 0.0  # the row is quoted, not stated
    assert key_fact_precision(answer.text, reference, INCOME_QUESTION) is None  # the sentence states no figure
    focused = ScriptedLLM(script=json.dumps({"answer": "A family of 5 may earn $4,106 bi-weekly.", "lines": []}))
    answer = answer_from_evidence(focused, INCOME_QUESTION, CHUNKS, max_units=8)
    [row] = [line for line in answer.text.splitlines() if line.startswith("“")]  # the line stating its figure
    assert "Bi-Weekly: $4,106" in row


def test_a_quoted_unit_shows_the_lines_around_it_but_a_named_row_stays_alone():
    """Each quoted unit comes with the line before and after it in its chunk (a sentence cut by the PDF, the
    line a figure's subject is on), cited as the span; the figure keeps its own unit. A row the question
    names is quoted alone: the rows around it answer other questions."""
    from rag_lab.answer.evidence_answer import QUOTE_CONTEXT_LINES

    assert QUOTE_CONTEXT_LINES == 1
    reply = ScriptedLLM(script=json.dumps({"answer": "Families may earn up to 85% of the State Median Income.",
                                           "lines": []}))
    answer = answer_from_evidence(reply, INCOME_QUESTION, CHUNKS)
    [quote] = [line for line in answer.text.splitlines() if line.startswith("“")]
    # the sentence window (lines 1-3) and line 4 after it; line 5 (a row) is beyond the one line of context
    assert quote.endswith(f"Median Income (SMI).” [Doc 2: {INCOME_FILE}, Page 1, lines 1-4]")
    assert "Family Size 4" not in quote
    [citation] = [c for c in answer.figure_citations if c.figure == "percent_85"]
    assert (citation.doc, citation.first_line, citation.last_line) == (2, 1, 3)
    share = "What is the maximum bi-weekly parent share of cost for a family of 8?"
    named = answer_from_evidence(ScriptedLLM(script=json.dumps({"answer": "A family of 8 pays at most $383 bi-weekly.",
                                                                 "lines": []})), share, CHUNKS)
    [row] = [line for line in named.text.splitlines() if line.startswith("“")]
    assert row.startswith("“Maximum Parent Share of Cost | Family Size 8") and "Family Size 7" not in row
    assert row.endswith(", line 4]")
