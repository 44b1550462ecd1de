"""Two program years in the context, none in the question: the prompt asks for each year's answer, named."""

from __future__ import annotations

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, TextNode

from rag_lab.answer.engine import CitedQueryEngine
from rag_lab.answer.years import program_years_note
from tests.answer.conftest import ScriptedLLM

BCY26 = "bcy26-board-max-provider-payment-rates-twc.pdf"
BCY25 = "bcy25-board-max-provider-payment-rates-4-age-groups-twc.pdf"
OTHER = "child-care-services-guide-twc.pdf"


def chunk(filename: str, text: str, number: int) -> NodeWithScore:
    return NodeWithScore(node=TextNode(id_=f"{filename}-{number}", text=text,
                                       metadata={"filename": filename, "doc_id": filename, "page": 1}),
                         score=1.0 / number)


RATES = [chunk(BCY26, "Infant full day rate: $52.10", 1), chunk(OTHER, "Rates are paid per day.", 2),
         chunk(BCY25, "Infant full day rate: $49.80", 3)]


def test_the_note_lists_each_year_with_its_documents():
    note = program_years_note("What is the full-day rate for infants?", RATES)
    assert note is not None
    assert "BCY 2025: Doc 3" in note and "BCY 2026: Doc 1" in note and "naming the year" in note
    assert note.index("BCY 2025") < note.index("BCY 2026")


def test_no_note_when_the_question_names_a_year_or_the_context_holds_one():
    assert program_years_note("What is the full-day rate for infants in BCY 2026?", RATES) is None
    assert program_years_note("What was the infant rate in board contract year 2025?", RATES) is None
    assert program_years_note("What is the full-day rate for infants?", RATES[:2]) is None
    same_year = [RATES[0], chunk(BCY26.replace("board", "local"), "Toddler: $45", 2)]
    assert program_years_note("What is the toddler rate?", same_year) is None
    # two years, but not versions of one document (a state plan and a survey report): no note
    unrelated = [chunk("ccdf-state-plan-ffy2025-2027.pdf", "x", 1), chunk("survey-results-ffy-2023.pdf", "y", 2)]
    assert program_years_note("What does the plan cover?", unrelated) is None
    # legislature versions are not program years: no note
    reports = [chunk("report-to-88-leg.pdf", "x", 1), chunk("report-to-89-leg.pdf", "y", 2)]
    assert program_years_note("How many children were served?", reports) is None


class Fixed(BaseRetriever):
    def __init__(self, results):
        self.results = results
        super().__init__()

    def _retrieve(self, query_bundle):
        return list(self.results)


def test_the_engine_appends_the_note_to_the_question_in_the_prompt_only():
    llm = ScriptedLLM(script="$52.10 in BCY 2026 and $49.80 in BCY 2025 [Doc 1] [Doc 3]")
    engine = CitedQueryEngine(retriever=Fixed(RATES), llm=llm, mode="fusion", top_n=3, structured=False)
    response = engine.query("What is the full-day rate for infants?")
    prompt = llm.prompts[-1]
    assert "Question: What is the full-day rate for infants?\nNote: the documents are for more than one program year" in prompt
    assert response.metadata["years_note"].startswith("Note:")
    assert [s.doc for s in response.metadata["cited_sources"]] == [BCY26, BCY25]
    engine.query("What is the full-day rate for infants in BCY 2026?")
    assert "Note:" not in llm.prompts[-1] and llm.prompts[-1].endswith("BCY 2026?\nAnswer: ")
