"""What an ablation or a tune ran on, resolved once at its start: the retrieval studies' run plan.

``ablate`` and ``tune`` retrieve from one built index and may answer a few questions with the
generator (key facts score those answers: no judge). :func:`resolve_study` names those models the way
``eval``'s :class:`~rag_lab.evaluate.plan.run_plan.RunPlan` names them — the embedding model the
index was built with, the generator by its full identity (provider, endpoint and model, or an
injected LLM's class and configuration: the answer cache's spelling) — so every manifest says which
models made its numbers, and the answer step reads the name from here instead of resolving it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag_lab.config import Settings


@dataclass(frozen=True)
class StudyPlan:
    embedding: str  # the embedding model the index was built with
    index_fingerprint: str
    generator: str | None  # the answering model's identity; None when the study answers nothing
    judge: str | None = None  # the retrieval studies judge nothing (their answers are scored by key facts)

    @property
    def models(self) -> dict[str, str | None]:
        """The manifest's ``models``, named as ``eval`` names them (llm, embedding, judge)."""
        return {"llm": self.generator, "embedding": self.embedding, "judge": self.judge}


def resolve_study(index: Any, settings: Settings, *, answering: bool, llm: Any = None) -> StudyPlan:
    """The plan of a study over ``index`` (a :class:`~rag_lab.index.CorpusIndex`); ``answering``: it
    generates answers (``llm``: an injected generator, named by what it is)."""
    from rag_lab.evaluate.plan.answering import model_id

    manifest = index.manifest
    return StudyPlan(embedding=manifest.embed_model, index_fingerprint=manifest.fingerprint,
                     generator=model_id(settings, llm=llm) if answering else None)
