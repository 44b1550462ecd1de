"""Put contexts on chunks: the index variants ``none | annotations | llm | both``.

A chunk's context lives in its metadata under ``chunk_context``. :func:`index_text` is what the
index embeds and BM25-tokenizes (context + blank line + chunk); the node's own text stays the
original chunk, so generation sees the chunk as written. The context is excluded from the
metadata LlamaIndex shows an LLM unless ``show_in_prompt`` is set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from llama_index.core import Document
from llama_index.core.llms import LLM
from llama_index.core.schema import TextNode

from rag_lab.config import Settings
from rag_lab.errors import ConfigError, RagLabError
from rag_lab.ingest.contextual.annotations import PathAnnotations
from rag_lab.ingest.contextual.cache import CONTEXT_CACHE_FILE, ContextCache
from rag_lab.ingest.contextual.llm_context import (
    LOCAL_MAX_DOCUMENT_TOKENS, MAX_DOCUMENT_TOKENS, MAX_OUTPUT_TOKENS, ChunkContextualizer, ContextRequest,
    ContextStats,
)
from rag_lab.ingest.contextual.plan import ContextPlan, plan_contexts

VARIANTS = ("none", "annotations", "llm", "both")
CONTEXT_KEY = "chunk_context"
# Planning only (the run reads the loaded model's window): the local runtime's default n_ctx, and
# a cloud window, far above the document cap (MAX_DOCUMENT_TOKENS) anyway.
LOCAL_CONTEXT_WINDOW = 4096
REMOTE_CONTEXT_WINDOW = 128_000


class ConfirmationRequired(RagLabError):
    """A paid or long LLM run that the user has not confirmed."""


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ConfigError(f"Unknown contextual variant {variant!r}", f"use one of {', '.join(VARIANTS)}")
    return variant


def index_variant(contextual: str | None) -> str | None:
    """The index-folder suffix of a contextual variant (None: the plain index)."""
    if contextual in (None, "none"):
        return None
    return f"contextual-{check_variant(contextual)}"


def variant_fingerprint(base: str, variant: str, settings: Settings, dataset_root: Path,
                        show_in_prompt: bool = False) -> str:
    """The plain index's fingerprint extended by everything that decides the variant's contexts:
    the annotations file's bytes, the LLM (provider:model) and the prompt version."""
    if check_variant(variant) == "none":
        return base
    import hashlib
    import json

    from rag_lab.ingest.contextual.annotations import ANNOTATIONS_FILE
    from rag_lab.ingest.contextual.llm_context import PROMPT_VERSION

    params: dict = {"base": base, "contextual": variant, "show_in_prompt": show_in_prompt}
    if uses_annotations(variant):
        path = Path(dataset_root) / ANNOTATIONS_FILE
        params["annotations"] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    if uses_llm(variant):
        params |= {"llm": model_id(settings), "prompt": PROMPT_VERSION, "max_document_tokens": document_cap(settings)}
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()


def uses_annotations(variant: str) -> bool:
    return check_variant(variant) in ("annotations", "both")


def uses_llm(variant: str) -> bool:
    return check_variant(variant) in ("llm", "both")


def index_text(node: TextNode) -> str:
    """What is embedded and BM25-indexed: the context (if any), a blank line, the chunk."""
    context = node.metadata.get(CONTEXT_KEY)
    text = node.get_content()
    return f"{context}\n\n{text}" if context else text


def document_texts(documents: Sequence[Document]) -> dict[str, str]:
    """doc_id → the whole document (a PDF's pages joined in page order)."""
    pages: dict[str, list[tuple[int, str]]] = {}
    for document in documents:
        meta = document.metadata
        pages.setdefault(str(meta["doc_id"]), []).append((int(meta.get("page") or 0), document.text))
    return {doc_id: "\n\n".join(text for _, text in sorted(parts, key=lambda p: p[0]))
            for doc_id, parts in pages.items()}


def apply_contexts(nodes: Sequence[TextNode], contexts: Sequence[str | None], show_in_prompt: bool = False) -> None:
    """Store each context in its node's metadata (None: the node keeps no context)."""
    if len(nodes) != len(contexts):
        raise ValueError(f"{len(nodes)} nodes but {len(contexts)} contexts")
    for node, context in zip(nodes, contexts):
        if not context:
            node.metadata.pop(CONTEXT_KEY, None)
            continue
        node.metadata[CONTEXT_KEY] = context
        # index_text() prepends it itself; LlamaIndex must not add it a second time.
        if CONTEXT_KEY not in node.excluded_embed_metadata_keys:
            node.excluded_embed_metadata_keys.append(CONTEXT_KEY)
        hidden = CONTEXT_KEY in node.excluded_llm_metadata_keys
        if not show_in_prompt and not hidden:
            node.excluded_llm_metadata_keys.append(CONTEXT_KEY)
        elif show_in_prompt and hidden:
            node.excluded_llm_metadata_keys.remove(CONTEXT_KEY)


@dataclass
class ContextReport:
    variant: str
    chunks: int = 0
    annotated: int = 0  # chunks with an annotation sentence
    unannotated_documents: list[str] = field(default_factory=list)
    plan: ContextPlan | None = None
    llm: ContextStats | None = None

    def lines(self) -> list[str]:
        out = [f"contextual variant: {self.variant}"]
        if uses_annotations(self.variant):
            out.append(f"annotations: {self.annotated}/{self.chunks} chunks annotated"
                       + (f"; no pattern matches {len(self.unannotated_documents)} document(s): "
                          + ", ".join(self.unannotated_documents[:5]) if self.unannotated_documents else ""))
        if self.llm is not None:
            out.append(self.llm.summary())
        return out

    def to_dict(self) -> dict:
        return {"variant": self.variant, "chunks": self.chunks, "annotated": self.annotated,
                "unannotated_documents": self.unannotated_documents,
                "llm": self.llm.to_dict() if self.llm is not None else None}


def document_cap(settings: Settings) -> int:
    """Tokens of document (around the chunk) the LLM reads per chunk."""
    return LOCAL_MAX_DOCUMENT_TOKENS if settings.llm_is_local else MAX_DOCUMENT_TOKENS


def model_id(settings: Settings) -> str:
    """The contextualising LLM in cache keys and the index fingerprint: the one LLM-name spelling
    (``provider[@endpoint]:model``: two servers behind one model name are two models)."""
    from rag_lab.models.llm.identity import configured_name

    return configured_name(settings, settings.llm_model_name)


def contextualize(
    nodes: Sequence[TextNode],
    documents: Sequence[Document],
    variant: str,
    settings: Settings,
    *,
    annotations: PathAnnotations | None = None,
    dataset_root: Path | None = None,
    yes: bool = False,
    llm: LLM | Callable[[], LLM] | None = None,
    show_in_prompt: bool = False,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> ContextReport:
    """Give ``nodes`` the contexts of ``variant`` (in place) and report what it took.

    LLM variants print the plan first and raise :class:`ConfirmationRequired` when it is beyond
    the thresholds and ``yes`` is false. ``llm`` overrides the configured LLM (tests). The LLM calls
    run ``settings.llm_concurrency`` at once (``RAG_LAB_LLM_CONCURRENCY``; ``eval``'s rule when unset:
    1 for the in-process local model, which refuses more, 8 for remote providers).
    """
    report = ContextReport(check_variant(variant), chunks=len(nodes))
    if variant == "none":
        return report
    parts: list[list[str]] = [[] for _ in nodes]
    if uses_annotations(variant):
        if annotations is None:
            if dataset_root is None:
                raise ConfigError("The annotations variant needs the dataset's annotations.yaml",
                                  "pass dataset_root or annotations")
            annotations = PathAnnotations.for_dataset(dataset_root)
        doc_ids = sorted({str(n.metadata["doc_id"]) for n in nodes})
        report.unannotated_documents = annotations.unmatched(doc_ids)
        for slot, node in zip(parts, nodes):
            sentence = annotations.context_for(str(node.metadata["doc_id"]))
            if sentence:
                slot.append(sentence)
                report.annotated += 1
    if uses_llm(variant):
        texts = document_texts(documents)
        requests = [ContextRequest(texts[str(n.metadata["doc_id"])], n.get_content()) for n in nodes]
        if llm is None:
            from rag_lab.models.llm import get_llm

            capped = settings.model_copy(update={"llm_max_tokens": MAX_OUTPUT_TOKENS})
            llm = lambda: get_llm(capped)  # noqa: E731  (loaded only at the first cache miss)
        from rag_lab.models.concurrency import resolve_concurrency

        injected = llm if isinstance(llm, LLM) else None
        concurrency = resolve_concurrency(settings.llm_concurrency, settings, None, injected)
        window = _planning_window(settings, llm)
        with ContextCache(settings.cache_dir / CONTEXT_CACHE_FILE) as cache:
            contextualizer = ChunkContextualizer(llm, model_id(settings), cache,
                                                 max_document_tokens=document_cap(settings))
            report.plan = plan_contexts(requests, contextualizer, settings.llm_provider, settings.llm_model_name,
                                        cache, window, concurrency)
            echo(report.plan.summary())
            if report.plan.needs_confirmation and not yes:
                raise ConfirmationRequired(
                    f"This contextual build needs {report.plan.calls} LLM call(s) "
                    f"(≈ {report.plan.seconds / 60:.0f} min"
                    + (f", ≈ ${report.plan.cost_usd:.2f}" if report.plan.cost_usd else
                       ", cost unknown" if report.plan.cost_usd is None else "") + ")",
                    "rerun with --yes to confirm, or use --contextual annotations (no LLM)")
            contexts, report.llm = contextualizer.run(requests, progress=progress, concurrency=concurrency)
        for slot, context in zip(parts, contexts):
            if context:
                slot.append(context)
    apply_contexts(nodes, [" ".join(p) if p else None for p in parts], show_in_prompt)
    return report


def _planning_window(settings: Settings, llm) -> int:
    if isinstance(llm, LLM):
        return llm.metadata.context_window
    return LOCAL_CONTEXT_WINDOW if settings.llm_is_local else REMOTE_CONTEXT_WINDOW
