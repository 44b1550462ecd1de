"""RAGAS 0.4's modern API: the non-LLM metrics come from ``ragas.metrics.collections`` with embeddings
through its modern interface, score exactly as the deprecated classes did, and building any metric
raises no DeprecationWarning; the legacy judged path lives in one adapter module."""

from __future__ import annotations

import asyncio
import hashlib
import re
import warnings
from pathlib import Path

import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import MockLLM

from rag_lab.config import Settings
from rag_lab.evaluate.metrics import MetricContext, all_specs
from rag_lab.evaluate.metrics.modern import LlamaIndexEmbedding, SampleMetric
from rag_lab.evaluate.run.scorer import to_sample

RAG_LAB = Path(__file__).resolve().parents[2] / "rag_lab"
RECORDS = [
    {"id": "q1", "question": "What is the limit?", "answer": "The limit is 5 children per caregiver [Doc 1].",
     "reference": "Five children per caregiver is the maximum.",
     "contexts": [{"doc_id": "a.pdf", "filename": "a.pdf", "text": "the limit is 5"}], "relevant": {"a.pdf": 1}},
    {"id": "q2", "question": "Who pays?", "answer": "The parent pays a share of the cost.",
     "reference": "Parents pay a share of the cost based on income.",
     "contexts": [{"doc_id": "b.pdf", "filename": "b.pdf", "text": "parents pay"}], "relevant": {"b.pdf": 1}},
]


class HashEmbedding(BaseEmbedding):
    """Deterministic 16-d vectors from a text's hash (no model): enough to compare two code paths."""

    def _vector(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        return [b / 255 - 0.5 for b in digest[:16]]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector("query:" + query)  # differs from a text's: which one a metric uses shows

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


def _score(metric, record) -> float:
    return asyncio.run(metric.single_turn_ascore(to_sample(record)))


def test_non_llm_metrics_come_from_ragas_collections():
    from ragas.metrics.collections import BaseMetric

    specs = {s.name: s for s in all_specs()}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("rag_lab.models.get_embed_model", lambda settings: HashEmbedding(model_name="hash"))
        for name in ("rouge_l", "string_similarity", "semantic_similarity"):
            metric = specs[name].build(MetricContext(Settings(_env_file=None)))
            assert isinstance(metric, SampleMetric) and isinstance(metric.metric, BaseMetric), name


def test_modern_metrics_score_exactly_as_the_deprecated_classes():
    from ragas.metrics.collections import NonLLMStringSimilarity, RougeScore, SemanticSimilarity

    embedding = HashEmbedding(model_name="hash")
    modern = {"rouge": SampleMetric(RougeScore(rouge_type="rougeL", mode="fmeasure"), ("reference", "response")),
              "string": SampleMetric(NonLLMStringSimilarity(), ("reference", "response")),
              "semantic": SampleMetric(SemanticSimilarity(embeddings=LlamaIndexEmbedding(embedding)),
                                       ("reference", "response"))}
    with warnings.catch_warnings():  # the deprecated API, for comparison only
        warnings.simplefilter("ignore", DeprecationWarning)
        import ragas.embeddings
        import ragas.metrics

        legacy = {"rouge": ragas.metrics.RougeScore(rouge_type="rougeL", mode="fmeasure"),
                  "string": ragas.metrics.NonLLMStringSimilarity(),
                  "semantic": ragas.metrics.SemanticSimilarity(
                      embeddings=ragas.embeddings.LlamaIndexEmbeddingsWrapper(embedding))}
        from rag_lab.answer.statements import statement_text
        from rag_lab.evaluate.facts.key_facts import strip_citations

        for record in RECORDS:
            # the modern metrics read the answer's statements without citation markers: so must the legacy one
            said = {**record, "answer": " ".join(strip_citations(statement_text(record["answer"])).split())}
            for name in modern:
                assert _score(modern[name], record) == _score(legacy[name], said), (name, record["id"])


def test_building_and_scoring_every_metric_raises_no_deprecation_warning(monkeypatch):
    monkeypatch.setattr("rag_lab.models.get_embed_model", lambda settings: HashEmbedding(model_name="hash"))
    context = MetricContext(Settings(_env_file=None), judge_llm=MockLLM())
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for spec in all_specs():
            metric = spec.build(context)  # the judged ones: RAGAS's legacy classes, through the adapter
            if not spec.judged:
                assert isinstance(_score(metric, RECORDS[0]), float), spec.name  # NaN where not applicable


def test_no_deprecated_ragas_api_outside_the_adapter():
    """No ``from ragas.metrics import`` nor the LlamaIndex embeddings wrapper anywhere in rag_lab/, and
    RAGAS's legacy LLM wrapper only in the one adapter module that says why."""
    wrapper = "LlamaIndexLLM" + "Wrapper"
    users = set()
    for path in RAG_LAB.rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"from ragas\.metrics import|LlamaIndexEmbeddings" + "Wrapper", text), path
        if wrapper in text:
            users.add(path.relative_to(RAG_LAB).as_posix())
    assert users == {"evaluate/judge/ragas_legacy.py"}
