"""Answer one question in one mode, through the shared answer adapter, with a disk cache.

The cache key is the model, the prompt version (the answer, rerank and agent prompts, and the code of
the whole answer path, :func:`answer_code_hash`) and every input (mode, question, index fingerprint,
retrieval/rerank parameters, generation settings): re-running an unchanged sample costs nothing,
changing any of them recomputes it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import threading
from dataclasses import asdict
from typing import Any

from rag_lab.answer.types import Answer
from rag_lab.config import Settings
from rag_lab.models.llm.disk_cache import DiskCache, cache_key


# Where an answer is made: the code these reach (functions and classes they call, followed through
# their global names) and every constant of the modules that code lives in shape the answer: evidence
# selection and its limits (MAX_UNIT_CHARS), quoting, the figure grammar and its check, the answer
# cap, max_tokens, the prompts, the local model's generation settings.
ANSWER_CODE = ("rag_lab.answer.adapter:make_answerer", "rag_lab.answer.evidence_answer:answer_from_evidence",
               "rag_lab.answer.evidence_answer:checked_answer", "rag_lab.models.llm.local_llm:build_local")


@functools.lru_cache(maxsize=1)
def answer_code_hash() -> str:
    """Sixteen hex digits of the answer path's code: the syntax (docstrings, comments and annotations
    left out) of every rag_lab function and class :data:`ANSWER_CODE` reaches
    (:func:`rag_lab.evaluate.judge.versions.code_of`, the judge's walk), the constants they read, and
    every upper-case constant of the modules they live in (a default argument's value, such as
    ``QUOTE_CONTEXT_LINES``, is read where the function is defined). Cached per process."""
    from rag_lab.evaluate.judge.versions import Rule, _stable, code_of

    code = code_of(Rule("answer", "derived", ANSWER_CODE))
    for module_name in sorted({key.split(":", 1)[0] for key in code}):
        for name, value in sorted(vars(importlib.import_module(module_name)).items()):
            if name.isupper() and (text := _stable(value)) is not None:
                code[f"{module_name}:{name}"] = text
    text = "\n".join(f"{k}\n{v}" for k, v in sorted(code.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def prompt_version() -> str:
    """What a cached answer depends on besides the model and the question: every prompt and answer
    schema (text and JSON forms, the local listwise rerank's), the rule that orders tied fused results,
    the compression rule, and the answer path's code (:func:`answer_code_hash`)."""
    from llama_index.core.prompts.default_prompts import DEFAULT_CHOICE_SELECT_PROMPT

    from rag_lab.answer.agent_reply import SYSTEM_PROMPT
    from rag_lab.answer.compress import RULE as COMPRESSION_RULE
    from rag_lab.answer.prompt import ANSWER_JSON_PROMPT_TMPL, ANSWER_PROMPT_TMPL, ANSWER_SCHEMA
    from rag_lab.answer.rerank import RERANK_PROMPT_VERSION
    from rag_lab.answer.years import YEARS_NOTE_TMPL, YEARS_RULE
    from rag_lab.fusion import TIE_RULE

    text = "\x00".join([ANSWER_PROMPT_TMPL, ANSWER_JSON_PROMPT_TMPL, json.dumps(ANSWER_SCHEMA, sort_keys=True),
                        DEFAULT_CHOICE_SELECT_PROMPT.get_template(), RERANK_PROMPT_VERSION, SYSTEM_PROMPT, TIE_RULE,
                        COMPRESSION_RULE, YEARS_NOTE_TMPL, YEARS_RULE, answer_code_hash()])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def answer_fields(answer: Answer) -> dict[str, Any]:
    """The run-record part of an answer (JSON-ready)."""
    timings = {k: float(v) for k, v in (answer.timings or {}).items()}
    timings["total"] = float(answer.response_time)
    return {
        "answer": answer.answer,
        "response_type": answer.response_type,
        "contexts": [{"rank": c.rank, "doc_id": c.doc_id, "filename": c.filename, "page": c.page,
                      "score": c.score, "rerank_score": c.rerank_score, "text": c.text} for c in answer.chunks],
        "cited_sources": [asdict(s) for s in answer.cited_sources],
        "retrieved_sources": [asdict(s) for s in answer.retrieved_sources],
        "rerank": asdict(answer.rerank) if answer.rerank is not None else None,
        "latency": timings,
        "usage": dict(answer.usage),
        **({"evidence": answer.evidence, "figure_citations": answer.figure_citations} if answer.evidence else {}),
    }


def model_id(settings: Settings, *, for_agent: bool = False, llm: Any = None) -> str:
    """The generator's name in answer cache keys (:func:`llm_name` spelling): an LLM object passed in
    is named by what it is (:func:`llm_identity`: two objects with one model name but other settings
    are two models); the configured one by provider, endpoint (when not the provider's default:
    an OpenAI-compatible server, ``OPENAI_BASE_URL``, a Bedrock region) and model."""
    from rag_lab.models.llm.identity import configured_name, llm_identity

    if llm is not None:
        return llm_identity(llm)
    from rag_lab.models.llm.factory import resolve_model

    return configured_name(settings, resolve_model(settings, for_agent=for_agent))


class CachedAnswerer:
    """``answer(question) -> (fields, cached)`` for one mode; the answerer is built on first miss."""

    def __init__(self, mode: str, build, *, model_id: str, inputs: dict[str, Any], cache: DiskCache | None,
                 version: str | None = None) -> None:
        self.mode = mode
        self._build = build
        self._answerer = None
        self.model_id = model_id
        self.inputs = inputs
        self.cache = cache
        self.version = version or prompt_version()  # a run passes its plan's (resolved once)
        self._build_lock = threading.Lock()  # samples in flight (--concurrency) build it once

    def key(self, question: str) -> str:
        return cache_key("answer", model=self.model_id, prompt_version=self.version,
                         inputs={**self.inputs, "mode": self.mode, "question": question})

    def answer(self, question: str) -> tuple[dict[str, Any], bool]:
        key = self.key(question)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return hit, True
        with self._build_lock:
            if self._answerer is None:
                self._answerer = self._build()
        fields = answer_fields(self._answerer.query(question))
        if self.cache is not None:
            self.cache.put(key, fields, kind="answer")
        return fields, False


def context_window_input(settings: Settings) -> dict[str, int]:
    """The generator's context window as an answer cache input, when the settings set it
    (RAG_LAB_LLM_CONTEXT_WINDOW of an openai_compatible server: it decides how many chunks fit and
    the agent's history budget). Empty otherwise — the model name in the key fixes the window — so the
    keys of answers cached before it joined the key (local, openai, groq, bedrock) stay valid."""
    from rag_lab.models.llm.factory import configured_context_window

    window = configured_context_window(settings)
    return {} if window is None else {"context_window": window}


def answer_style_input(settings: Settings) -> dict[str, str]:
    """The answer style when it is the evidence-first path; empty for free answers. How evidence is
    selected, asked for and quoted is in every key already (:func:`answer_code_hash`)."""
    if settings.resolved_answer_style == "free":
        return {}
    return {"answer_style": settings.resolved_answer_style}


def answer_inputs(settings: Settings, *, rerank: bool, params: dict[str, Any], index: str | None,
                  window: dict[str, int] | None = None) -> dict[str, Any]:
    """Every input of a cached answer besides the model, mode and question (``index``: its fingerprint;
    ``window``: :func:`context_window_input`, when the caller resolved it already). A run's answerers
    get theirs from its :class:`~rag_lab.evaluate.plan.run_plan.RunPlan`, and so does its dry run: it
    counts exactly the answers the run will find cached."""
    return {"rerank": rerank, "params": params, "temperature": settings.llm_temperature,
            "max_tokens": settings.llm_max_tokens, "context_lines": settings.context_lines, "index": index,
            **answer_style_input(settings),
            **(context_window_input(settings) if window is None else window)}


def pending(pairs: list, done: dict[str, dict[str, Any]], retry_failed: bool = False) -> list:
    """The (question, relevant) pairs still to run: not recorded, or recorded with a failure that may
    pass (its answer's or a judged metric's; with ``retry_failed`` any failure, see :mod:`rescore`)."""
    from rag_lab.evaluate.plan.rescore import needs_rerun

    return [item for item in pairs if item[0].id not in done or needs_rerun(done[item[0].id], retry_failed)]


def index_fingerprint(mode: str, dataset: Any, settings: Settings, contextual: str | None = None) -> str:
    """What the answer cache keys of ``mode`` name the index by (the built index, or its
    ``contextual`` variant, must exist)."""
    from rag_lab.retrieve.registry import service_index

    if (remote := service_index(mode, settings)) is not None:
        return remote
    from rag_lab.index import CorpusIndex

    return CorpusIndex.open(dataset, settings, contextual).manifest.fingerprint
