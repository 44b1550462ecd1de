"""Answering: one cited-answer query engine per retrieval mode, and one evaluation adapter.

    answerer = make_answerer("fusion", settings, dataset)   # or "agent"
    answer = answerer.query("What is …?")                  # -> Answer (to_dict() for JSON)
"""

from rag_lab.answer.adapter import AnswerPipeline, Answerer, make_answerer
from rag_lab.answer.engine import CitedQueryEngine, build_engine
from rag_lab.answer.prompt import ANSWER_PROMPT, NO_ANSWER, extract_sources, format_context
from rag_lab.answer.types import Answer, Chunk, RerankInfo, Source

__all__ = [
    "ANSWER_PROMPT", "NO_ANSWER", "Answer", "AnswerPipeline", "Answerer", "Chunk", "CitedQueryEngine",
    "RerankInfo", "Source", "build_engine", "extract_sources", "format_context", "make_answerer",
]
