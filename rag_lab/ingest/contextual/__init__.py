"""Contextual retrieval: situate every chunk in its document before it is indexed.

- :mod:`.annotations` — YAML glob patterns over document paths → a context sentence (no LLM);
- :mod:`.llm_context` — an LLM-written context per chunk, validated, retried once, cached;
- :mod:`.plan` — calls, time and cost estimated before an LLM run (``--yes`` beyond a threshold);
- :mod:`.apply` — the variants ``none | annotations | llm | both`` and :func:`index_text`.
"""

from rag_lab.ingest.contextual.annotations import ANNOTATIONS_FILE, Annotation, PathAnnotations
from rag_lab.ingest.contextual.apply import (
    CONTEXT_KEY, VARIANTS, ConfirmationRequired, ContextReport, apply_contexts, check_variant, contextualize,
    document_texts, index_text, index_variant, uses_annotations, uses_llm, variant_fingerprint,
)
from rag_lab.ingest.contextual.cache import ContextCache
from rag_lab.ingest.contextual.llm_context import (
    PROMPT_VERSION, ChunkContextualizer, ContextRequest, ContextStats, clean_answer, cut_document,
    rejection_reason,
)
from rag_lab.ingest.contextual.plan import ContextPlan, plan_contexts

__all__ = [
    "ANNOTATIONS_FILE", "Annotation", "CONTEXT_KEY", "ChunkContextualizer", "ConfirmationRequired",
    "ContextCache", "ContextPlan", "ContextReport", "ContextRequest", "ContextStats", "PROMPT_VERSION",
    "PathAnnotations", "VARIANTS", "apply_contexts", "check_variant", "clean_answer", "contextualize",
    "cut_document", "document_texts", "index_text", "index_variant", "variant_fingerprint", "plan_contexts", "rejection_reason", "uses_annotations",
    "uses_llm",
]
