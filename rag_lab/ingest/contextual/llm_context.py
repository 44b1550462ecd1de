"""LLM chunk context ("contextual retrieval"): the configured LLM reads the document (cut around
the chunk when it exceeds the model's window) and the chunk, and answers with a short context
that situates the chunk for search.

An answer is kept only when it is plain text of 30 < length < 750 characters that neither echoes
the prompt nor copies the chunk; otherwise the model is asked once more (told why), and after a
second rejection the chunk is recorded as uncontextualised — counted, never silent. Results are
cached (see :mod:`.cache`); calls, tokens and time are recorded in :class:`ContextStats`.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM

from rag_lab.ingest.contextual.cache import CacheKey, CachedContext, ContextCache, text_hash
from rag_lab.models.llm.usage import track_usage
from rag_lab.progress import progress_bar

# Bump when the prompt, the retry message or the validation rules change: it invalidates the cache.
PROMPT_VERSION = "ctx-2"
MIN_CHARS = 30  # exclusive bounds: 30 < len(context) < 750
MAX_CHARS = 750
MAX_OUTPUT_TOKENS = 160  # ~ 600 characters; a longer answer would be rejected anyway
MAX_DOCUMENT_TOKENS = 6000  # cloud windows are large, but the whole document per chunk is not free
# The local model reads prompts on shared CPUs: a shorter window around the chunk keeps a call to seconds.
LOCAL_MAX_DOCUMENT_TOKENS = 1000
CHARS_PER_TOKEN = 2.5  # conservative (SmolLM2 needs ~1.5x tiktoken's count on number tables)
PROMPT_OVERHEAD_TOKENS = 220  # system message, instructions, chat template

SYSTEM_PROMPT = ("You write short search contexts for document chunks. Reply with one or two plain "
                 "sentences and nothing else.")
USER_TEMPLATE = (
    "<document>\n{document}\n</document>\n"
    "Here is the chunk we want to situate within the whole document:\n"
    "<chunk>\n{chunk}\n</chunk>\n"
    "Please give a short succinct context to situate this chunk within the overall document for the "
    "purposes of improving search retrieval of the chunk. Answer only with the succinct context and "
    "nothing else."
)
# Small models often copy the chunk: the retry asks for the sentence in their own words.
RETRY_TEMPLATE = (
    "That answer was rejected ({reason}). In one sentence of your own words, starting with 'This chunk', "
    "say which document the chunk comes from and what topic it covers. Do not copy the chunk."
)

# Phrases of our own prompt: an answer containing one is an echo, not a context.
_PROMPT_PHRASES = ("<document>", "</document>", "<chunk>", "</chunk>", "situate this chunk",
                   "succinct context", "answer only with", "improving search retrieval",
                   "here is the chunk", "that answer was rejected")
_MARKUP = re.compile(r"</?[A-Za-z][A-Za-z0-9_-]*(\s[^<>]*)?/?>|```|^\s*#{1,6}\s|^\s*[{\[]\s*[\"{\[]|\|\s*-{3,}",
                     re.MULTILINE)
_LABEL = re.compile(r"^\s*(?:\*\*)?(?:succinct\s+)?context\s*:?(?:\*\*)?\s*:?\s*", re.IGNORECASE)
_WORD = re.compile(r"\w+")
ECHO_NGRAM = 5
ECHO_SHARE = 0.6  # this share of the answer's word 5-grams found in the chunk = a copy
REPEAT_NGRAM = 4
REPEAT_SHARE = 0.3  # this share of the answer's word 4-grams repeated = a model stuck in a loop


def clean_answer(text: str | None) -> str:
    """Whitespace collapsed, a leading "Context:" label and wrapping quotes removed."""
    text = " ".join((text or "").split())
    text = _LABEL.sub("", text, count=1) if _LABEL.match(text) and len(text) > 12 else text
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    return text


def _ngrams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def rejection_reason(answer: str, chunk: str, raw: str | None = None) -> str | None:
    """Why ``answer`` (cleaned) is not a usable context, or None when it is."""
    if not answer:
        return "empty"
    source = raw if raw is not None else answer
    if _MARKUP.search(source):
        return "markup"
    lowered = answer.lower()
    if any(phrase in lowered for phrase in _PROMPT_PHRASES):
        return "echoes the prompt"
    words = [w.lower() for w in _WORD.findall(answer)]
    grams = _ngrams(words, ECHO_NGRAM)
    if grams:
        chunk_grams = _ngrams([w.lower() for w in _WORD.findall(chunk)], ECHO_NGRAM)
        if len(grams & chunk_grams) / len(grams) >= ECHO_SHARE:
            return "echoes the chunk"
    four = [tuple(words[i : i + REPEAT_NGRAM]) for i in range(len(words) - REPEAT_NGRAM + 1)]
    if len(four) >= 8 and 1 - len(set(four)) / len(four) >= REPEAT_SHARE:
        return "repetitive"
    if len(answer) >= MAX_CHARS:
        return "too long"
    if len(answer) <= MIN_CHARS:
        return "too short"
    return None


def cut_document(document: str, chunk: str, max_chars: int) -> str:
    """The document, or — when longer than ``max_chars`` — the window of it centred on the chunk."""
    if len(document) <= max_chars:
        return document
    max_chars = max(max_chars, 0)
    start = -1
    for probe in (chunk[:200], chunk[:60], chunk.strip()[:30]):
        if probe and (start := document.find(probe)) >= 0:
            break
    middle = start + min(len(chunk), len(document)) // 2 if start >= 0 else len(document) // 2
    begin = min(max(middle - max_chars // 2, 0), len(document) - max_chars)
    window = document[begin : begin + max_chars]
    return ("… " if begin > 0 else "") + window + (" …" if begin + max_chars < len(document) else "")


def document_budget_chars(context_window: int, chunk: str, max_output_tokens: int = MAX_OUTPUT_TOKENS,
                          max_document_tokens: int = MAX_DOCUMENT_TOKENS) -> int:
    """Characters of document that fit beside the chunk, the prompt and the answer."""
    chunk_tokens = len(chunk) / CHARS_PER_TOKEN
    tokens = min(context_window - max_output_tokens - PROMPT_OVERHEAD_TOKENS - chunk_tokens, max_document_tokens)
    return max(int(tokens * CHARS_PER_TOKEN), 0)


def build_messages(document: str, chunk: str) -> list[ChatMessage]:
    return [ChatMessage(role=MessageRole.SYSTEM, content=SYSTEM_PROMPT),
            ChatMessage(role=MessageRole.USER, content=USER_TEMPLATE.format(document=document, chunk=chunk))]


@dataclass
class ContextStats:
    """What a contextualisation run did and cost."""

    chunks: int = 0
    from_cache: int = 0
    contextualised: int = 0
    uncontextualised: int = 0  # rejected twice: indexed without an LLM context
    calls: int = 0  # LLM requests made (a retry is a call)
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # time spent in LLM calls this run, summed over calls (they overlap at concurrency > 1)
    reasons: Counter = field(default_factory=Counter)  # rejection reasons of every rejected answer

    def summary(self) -> str:
        reasons = ", ".join(f"{r}: {n}" for r, n in self.reasons.most_common()) or "none"
        return (f"chunk contexts: {self.chunks} chunks, {self.from_cache} from cache, {self.calls} LLM call(s) "
                f"({self.retries} retries), {self.prompt_tokens} prompt + {self.completion_tokens} completion "
                f"tokens, {self.seconds:.1f}s; {self.contextualised} contextualised, "
                f"{self.uncontextualised} uncontextualised (rejected answers: {reasons})")

    def add(self, other: "ContextStats") -> None:
        """Count ``other``'s LLM calls, tokens, time and rejections here."""
        self.calls += other.calls
        self.retries += other.retries
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.seconds += other.seconds
        self.reasons.update(other.reasons)

    def to_dict(self) -> dict:
        return {"chunks": self.chunks, "from_cache": self.from_cache, "contextualised": self.contextualised,
                "uncontextualised": self.uncontextualised, "calls": self.calls, "retries": self.retries,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "seconds": round(self.seconds, 3), "reasons": dict(self.reasons)}


@dataclass(frozen=True)
class ContextRequest:
    document: str  # the whole document (all pages of the file)
    chunk: str


class ChunkContextualizer:
    """One short context per chunk, through any LlamaIndex LLM, cached.

    ``llm`` may be a factory: it is called only at the first cache miss, so a fully cached
    rebuild never loads (or pays for) a model.
    """

    def __init__(self, llm: LLM | Callable[[], LLM], model_id: str, cache: ContextCache | None = None, *,
                 context_window: int | None = None, max_output_tokens: int = MAX_OUTPUT_TOKENS,
                 max_document_tokens: int = MAX_DOCUMENT_TOKENS, prompt_version: str = PROMPT_VERSION) -> None:
        self._llm = llm if isinstance(llm, LLM) else None
        self._factory = None if isinstance(llm, LLM) else llm
        self.model_id = model_id
        self.cache = cache
        self._window = context_window
        self.max_output_tokens = max_output_tokens
        self.max_document_tokens = max_document_tokens
        self.prompt_version = prompt_version

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            assert self._factory is not None
            self._llm = self._factory()
        return self._llm

    @property
    def context_window(self) -> int:
        return self._window or self.llm.metadata.context_window

    def key(self, request: ContextRequest) -> CacheKey:
        return CacheKey(text_hash(request.document), text_hash(request.chunk), self.model_id, self.prompt_version)

    def _ask(self, messages: list[ChatMessage], stats: ContextStats) -> str:
        with track_usage() as usage:
            started = time.perf_counter()
            response = self.llm.chat(messages)
            stats.seconds += time.perf_counter() - started
        stats.calls += 1
        stats.prompt_tokens += usage.prompt_tokens
        stats.completion_tokens += usage.completion_tokens
        return response.message.content or ""

    def _generate(self, request: ContextRequest, stats: ContextStats) -> CachedContext:
        budget = document_budget_chars(self.context_window, request.chunk, self.max_output_tokens,
                                       self.max_document_tokens)
        messages = build_messages(cut_document(request.document, request.chunk, budget), request.chunk)
        before = (stats.prompt_tokens, stats.completion_tokens, stats.seconds)
        reason = None
        for attempt in (1, 2):
            raw = self._ask(messages, stats)
            answer = clean_answer(raw)
            reason = rejection_reason(answer, request.chunk, raw)
            if reason is None:
                break
            stats.reasons[reason] += 1
            if attempt == 1:
                stats.retries += 1
                messages = [*messages, ChatMessage(role=MessageRole.ASSISTANT, content=raw[:2000]),
                            ChatMessage(role=MessageRole.USER, content=RETRY_TEMPLATE.format(reason=reason))]
        return CachedContext(None if reason else answer, reason, attempt, stats.prompt_tokens - before[0],
                             stats.completion_tokens - before[1], stats.seconds - before[2])

    def run(self, requests: Sequence[ContextRequest], progress: bool = True,
            concurrency: int = 1) -> tuple[list[str | None], ContextStats]:
        """Every request's context, ``concurrency`` LLM calls in flight at once
        (:func:`rag_lab.schedule.run_in_flight`): workers only ask the LLM; this thread reads
        and writes the cache (one committed row per finished chunk, so a kill loses at most those in
        flight) and counts. A chunk repeated in ``requests`` is asked once; the rest are cache hits,
        as they are one at a time."""
        from rag_lab.schedule import run_in_flight

        stats = ContextStats(chunks=len(requests))
        outcomes: dict[CacheKey, CachedContext] = {}
        todo: dict[CacheKey, ContextRequest] = {}
        for request in requests:
            key = self.key(request)
            if key in outcomes or key in todo:
                continue
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is not None:
                outcomes[key] = cached
            else:
                todo[key] = request
        if todo:
            _ = self.llm  # built once, here, not by the first workers at the same time

        def generate(key: CacheKey) -> dict:
            own = ContextStats()  # per call: workers share nothing but the LLM
            return {"key": key, "outcome": self._generate(todo[key], own), "stats": own}

        def write(done: dict) -> None:
            if self.cache is not None:
                self.cache.put(done["key"], done["outcome"])  # committed now: a crash loses nothing done
            outcomes[done["key"]] = done["outcome"]
            stats.add(done["stats"])

        with progress_bar(total=len(todo), desc="chunk contexts", unit="chunk", enabled=progress) as bar:
            run_in_flight(list(todo), generate, write, concurrency=concurrency, on_done=bar.update)
        contexts = [outcomes[self.key(r)].context for r in requests]
        stats.from_cache = len(requests) - len(todo)
        stats.contextualised = sum(1 for c in contexts if c is not None)
        stats.uncontextualised = len(contexts) - stats.contextualised
        return contexts, stats
