"""semantic_similarity makes one embedding attempt per text: RAGAS's own retry layer (10 attempts with
exponential waits up to a minute by default) is off, as for the judged metrics' embeddings; the
embedding client's SDK is the one retry layer."""

from __future__ import annotations

from llama_index.core.base.embeddings.base import BaseEmbedding

from rag_lab.evaluate.run.scorer import Scorer
from tests.models.fake_openai_server import run_within


class FailingEmbedding(BaseEmbedding):
    """Every call fails; counts the attempts."""

    attempts: int = 0

    def _fail(self, *_args):
        self.attempts += 1
        raise RuntimeError("embedding service unavailable")

    _get_query_embedding = _get_text_embedding = _fail

    async def _aget_query_embedding(self, query):
        return self._fail()

    async def _aget_text_embedding(self, text):
        return self._fail()


def test_a_failing_embedding_is_one_attempt_and_a_recorded_error(lab_settings, monkeypatch):
    embedding = FailingEmbedding(model_name="failing")
    # under get_embed_model (modules that imported it keep the real one once the test is over)
    monkeypatch.setattr("rag_lab.models.embeddings.local_embedding", lambda settings: embedding)
    assert lab_settings.embed_provider == "local"
    scorer = Scorer(lab_settings, metrics=["semantic_similarity"])
    record = {"id": "q1", "question": "What is the limit?", "answer": "The limit is 5 [Doc 1].", "reference": "Five.",
              "contexts": [{"doc_id": "a.pdf", "filename": "a.pdf", "text": "the limit is 5"}], "relevant": {"a.pdf": 1}}
    (scores, errors), _ = run_within(120, scorer.score, record)  # before: retried, with waits of up to 60 s
    assert scores["semantic_similarity"] is None and "embedding service unavailable" in errors["semantic_similarity"]
    assert embedding.attempts == 1  # before: 1 + RAGAS's retries
