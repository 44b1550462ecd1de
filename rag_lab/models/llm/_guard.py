"""Turn provider SDK failures into one clear ``ProviderError``, with secrets scrubbed.

The SDKs are the one retry layer (bounded by ``max_retries``, with backoff); what reaches us has
exhausted its retries, or was not worth retrying (400/401/403/404: ``ProviderRefusedError``).
``GuardedLLMMixin`` wraps the public LLM entry points of a LlamaIndex LLM subclass: everything
else (``predict``, ``chat_with_tools``, agents …) goes through them. ``GuardedEmbeddingMixin`` does
the same for the request methods of an embedding subclass.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from pydantic import SecretStr

from rag_lab.errors import ProviderError

# Returns None for exceptions it does not own (they propagate untouched: our bugs stay visible).
Classifier = Callable[[BaseException, "ErrorGuard"], "ProviderError | None"]

_MAX_DETAIL = 300


class ProviderRefusedError(ProviderError):
    """The provider turned this request down (HTTP 400) and said why: retrying cannot help."""


class ProviderAccessError(ProviderRefusedError):
    """Credentials, permission or model refused (401/403/404): no later request will fare better."""


@dataclass(frozen=True)
class ErrorGuard:
    provider: str  # "OpenAI", "Groq", "Bedrock", "local"
    model: str
    attempts: int  # 1 + retries, for the message
    classify: Classifier = field(repr=False)
    secrets: tuple[SecretStr, ...] = field(default=(), repr=False)
    endpoint: str = ""  # base URL (or region): part of the LLM's name (identity.llm_identity)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            value = secret.get_secret_value()
            if value:
                text = text.replace(value, "***")
        return text

    def detail(self, exc: BaseException) -> str:
        text = self.redact(str(exc)).strip() or type(exc).__name__
        return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL] + "…"

    def error(self, what: str, hint: str, exc: BaseException,
              kind: type[ProviderError] = ProviderError) -> ProviderError:
        return kind(f"{self.provider} model {self.model!r}: {what} ({self.detail(exc)})", hint)

    def leaks(self, exc: BaseException) -> bool:
        return self.redact(str(exc)) != str(exc)

    @contextmanager
    def translating(self) -> Iterator[None]:
        try:
            yield
        except ProviderError:
            raise
        except Exception as exc:
            err = self.classify(exc, self)
            if err is None:
                raise
            # Keep the SDK error as the cause for --debug, unless its own text holds a secret.
            raise err from (None if self.leaks(exc) else exc)


class GuardedLLMMixin:
    """Put before the LlamaIndex LLM class: ``class X(GuardedLLMMixin, OpenAI)``.

    The concrete class declares ``_guard: ErrorGuard = PrivateAttr()`` and sets it.
    """

    _guard: ErrorGuard

    def _guard_gen(self, gen: Iterator[Any]) -> Iterator[Any]:
        with self._guard.translating():
            yield from gen

    async def _guard_agen(self, agen: AsyncIterator[Any]) -> AsyncIterator[Any]:
        with self._guard.translating():
            async for item in agen:
                yield item

    def chat(self, messages: Sequence[Any], **kwargs: Any) -> Any:
        with self._guard.translating():
            return super().chat(messages, **kwargs)  # type: ignore[misc]

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        with self._guard.translating():
            return super().complete(prompt, formatted=formatted, **kwargs)  # type: ignore[misc]

    def stream_chat(self, messages: Sequence[Any], **kwargs: Any) -> Any:
        with self._guard.translating():
            gen = super().stream_chat(messages, **kwargs)  # type: ignore[misc]
        return self._guard_gen(gen)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        with self._guard.translating():
            gen = super().stream_complete(prompt, formatted=formatted, **kwargs)  # type: ignore[misc]
        return self._guard_gen(gen)

    async def achat(self, messages: Sequence[Any], **kwargs: Any) -> Any:
        with self._guard.translating():
            return await super().achat(messages, **kwargs)  # type: ignore[misc]

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        with self._guard.translating():
            return await super().acomplete(prompt, formatted=formatted, **kwargs)  # type: ignore[misc]

    async def astream_chat(self, messages: Sequence[Any], **kwargs: Any) -> Any:
        with self._guard.translating():
            agen = await super().astream_chat(messages, **kwargs)  # type: ignore[misc]
        return self._guard_agen(agen)

    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        with self._guard.translating():
            agen = await super().astream_complete(prompt, formatted=formatted, **kwargs)  # type: ignore[misc]
        return self._guard_agen(agen)


class GuardedEmbeddingMixin:
    """The same for a LlamaIndex embedding class: ``class X(GuardedEmbeddingMixin, OpenAIEmbedding)``.
    Its private ``_get_*`` / ``_aget_*`` methods are where every request is made, whichever public
    method (single, batch, async) was called.

    The concrete class declares ``_guard: ErrorGuard | None = PrivateAttr(default=None)``: None after a
    pickle round trip (LlamaIndex drops what cannot be pickled; the classifier is a closure), when the
    SDK's own errors pass through untranslated instead of an AttributeError."""

    _guard: ErrorGuard | None

    def _translating(self) -> AbstractContextManager[None]:
        return self._guard.translating() if self._guard is not None else nullcontext()

    def _get_query_embedding(self, query: str) -> list[float]:
        with self._translating():
            return super()._get_query_embedding(query)  # type: ignore[misc]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        with self._translating():
            return await super()._aget_query_embedding(query)  # type: ignore[misc]

    def _get_text_embedding(self, text: str) -> list[float]:
        with self._translating():
            return super()._get_text_embedding(text)  # type: ignore[misc]

    async def _aget_text_embedding(self, text: str) -> list[float]:
        with self._translating():
            return await super()._aget_text_embedding(text)  # type: ignore[misc]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        with self._translating():
            return super()._get_text_embeddings(texts)  # type: ignore[misc]

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        with self._translating():
            return await super()._aget_text_embeddings(texts)  # type: ignore[misc]
