"""Typed configuration from environment variables and `.env`.

Lab settings use the ``RAG_LAB_`` prefix; provider credentials use the names their SDKs use
(``OPENAI_API_KEY``, ``GROQ_API_KEY``, ``QDRANT_URL``, ``KENDRA_INDEX_ID``, ``AWS_REGION`` …).
Secrets are ``SecretStr`` so they never leak through reprs, logs or reports.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict

from rag_lab.errors import ConfigError, one_of

# How the local MiniLM runs: its exported graph on OpenVINO (default; bf16 where the CPU has it), ONNX
# Runtime fp32 or int8, or PyTorch (sentence-transformers).
EmbedBackend = Literal["openvino", "onnx", "onnx-int8", "torch"]



@dataclass(frozen=True)
class EmbedProviderSpec:
    """One embedding provider: ``builder`` (``"module:function"``, taking the settings and the transports
    ``get_embed_model`` injects) makes its model; a new provider is its builder plus one row in
    :data:`EMBED_PROVIDERS`."""

    name: str  # RAG_LAB_EMBED_PROVIDER's value, and the first part of its vectors' id
    builder: str
    default_model: str | None = None  # None: RAG_LAB_EMBED_MODEL must name one
    endpoint_setting: str | None = None  # the Settings field naming its server: part of the vectors' id
    local: bool = False  # runs on this machine, offline

    def load_builder(self) -> Callable[..., Any]:
        module, _, name = self.builder.partition(":")
        return getattr(importlib.import_module(module), name)


_E = "rag_lab.models.embeddings:"
EMBED_PROVIDERS: dict[str, EmbedProviderSpec] = {spec.name: spec for spec in (
    EmbedProviderSpec("local", f"{_E}local_embedding", "sentence-transformers/all-MiniLM-L6-v2", local=True),
    EmbedProviderSpec("openai", f"{_E}openai_embedding", "text-embedding-3-small"),
    EmbedProviderSpec("bedrock", f"{_E}bedrock_embedding", "amazon.titan-embed-text-v2:0"),
    EmbedProviderSpec("openai_compatible", f"{_E}openai_compatible_embedding", endpoint_setting="embed_base_url"),
)}
# The table's default models as loaded (the settings read the table itself).
DEFAULT_EMBED_MODELS: dict[str, str] = {name: spec.default_model for name, spec in EMBED_PROVIDERS.items()
                                        if spec.default_model}


@dataclass(frozen=True)
class LLMProviderSpec:
    """One LLM provider, the one place its facts live: the factory builds it with ``builder``, the
    identity spells its endpoint, the prices and the settings' checks read the rest. A new provider
    is its module (a ``build(settings, model, ...)`` function) plus one row in :data:`LLM_PROVIDERS`."""

    name: str  # RAG_LAB_LLM_PROVIDER's value, and the first part of its models' names (``groq:MODEL``)
    label: str  # how its errors name it (``ErrorGuard.provider``)
    builder: str  # ``"module:function"``, imported on first use; it takes (settings, model) and any of
    # the transports ``get_llm`` injects (http_client, async_http_client, bedrock_client)
    default_model: str | None = None  # None: RAG_LAB_LLM_MODEL must name one
    agent_model: str | None = None  # the agent's default when it differs (many short tool-routing calls)
    key_env: str | None = None  # the variable (environment or .env) holding its API key …
    key_setting: str | None = None  # … or the Settings field that reads it, when it has one
    key_required: bool = False
    default_endpoint: str | None = None  # where its SDK sends requests unless told: not part of a name
    endpoint_env: str | None = None  # a variable its SDK reads for another endpoint
    endpoint_setting: str | None = None  # the Settings field naming its endpoint (a URL or a region)
    region_endpoint: bool = False  # the endpoint is a region: the list prices hold there
    window_from_settings: bool = False  # the server does not report its window: RAG_LAB_LLM_CONTEXT_WINDOW
    free: bool = False  # costs time, not money
    local: bool = False  # runs in this process, offline (the compression, answer style and judge design follow)
    # model → list price in USD per million tokens (input, output), standard tier, no batch or
    # prompt-caching discount; models named with one of ``regional_prefixes`` (``us.MODEL``) are
    # priced as MODEL. Prices move: check the provider's page before relying on them.
    prices: Mapping[str, tuple[float, float]] = field(default_factory=lambda: MappingProxyType({}))
    regional_prefixes: tuple[str, ...] = ()

    def load_builder(self) -> Callable[..., Any]:
        module, _, name = self.builder.partition(":")
        return getattr(importlib.import_module(module), name)


# Prices as of PRICES_AS_OF from openai.com/api/pricing, groq.com/pricing, aws.amazon.com/bedrock/pricing
# (us-east-1, on-demand).
PRICES_AS_OF = "2026-11"
LLM_PROVIDERS: dict[str, LLMProviderSpec] = {spec.name: spec for spec in (
    LLMProviderSpec(
        "local", "local", "rag_lab.models.llm.local_llm:build_local", free=True, local=True,
        default_model="Qwen2.5-Coder-1.5B-Instruct-Q4_K_M"),  # benchmarks/offline_models.py: see README
    LLMProviderSpec(
        "openai", "OpenAI", "rag_lab.models.llm.openai_llm:build_openai", default_model="gpt-5-mini",
        agent_model="gpt-5-nano", key_env="OPENAI_API_KEY", key_setting="openai_api_key", key_required=True,
        default_endpoint="https://api.openai.com/v1", endpoint_env="OPENAI_BASE_URL",
        prices=MappingProxyType({"gpt-5": (1.25, 10.00), "gpt-5-mini": (0.25, 2.00), "gpt-5-nano": (0.05, 0.40),
                        "gpt-4.1": (2.00, 8.00), "gpt-4.1-mini": (0.40, 1.60), "gpt-4.1-nano": (0.10, 0.40),
                        "gpt-4o": (2.50, 10.00), "gpt-4o-mini": (0.15, 0.60)})),
    LLMProviderSpec(
        "groq", "Groq", "rag_lab.models.llm.groq_llm:build_groq", default_model="llama-3.3-70b-versatile",
        key_env="GROQ_API_KEY", key_setting="groq_api_key", key_required=True,
        default_endpoint="https://api.groq.com/openai/v1",
        prices=MappingProxyType({"llama-3.3-70b-versatile": (0.59, 0.79), "llama-3.1-8b-instant": (0.05, 0.08),
                        "openai/gpt-oss-120b": (0.15, 0.75), "openai/gpt-oss-20b": (0.10, 0.50)})),
    LLMProviderSpec(
        "bedrock", "Bedrock", "rag_lab.models.llm.bedrock_llm:build_bedrock", default_model="amazon.nova-pro-v1:0",
        endpoint_setting="aws_region", region_endpoint=True, regional_prefixes=("us", "eu", "apac", "global"),
        prices=MappingProxyType({"amazon.nova-pro-v1:0": (0.80, 3.20), "amazon.nova-lite-v1:0": (0.06, 0.24),
                        "amazon.nova-micro-v1:0": (0.035, 0.14),
                        "anthropic.claude-3-haiku-20240307-v1:0": (0.25, 1.25),
                        "anthropic.claude-3-5-haiku-20241022-v1:0": (0.80, 4.00)})),
    LLMProviderSpec(
        "openai_compatible", "OpenAI-compatible", "rag_lab.models.llm.openai_compatible_llm:build_openai_compatible",
        key_env="RAG_LAB_LLM_API_KEY", key_setting="llm_api_key", endpoint_setting="llm_base_url",
        window_from_settings=True),
)}
# The table's default models as loaded (the settings read the table itself).
DEFAULT_LLM_MODELS: dict[str, str] = {name: spec.default_model for name, spec in LLM_PROVIDERS.items()
                                      if spec.default_model}


def _alias(*names: str) -> AliasChoices:
    return AliasChoices(*names)


def default_models_dir() -> Path:
    """The machine's models folder: the user cache folder's ``rag-lab/models`` (``~/.cache`` or
    ``$XDG_CACHE_HOME`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("rag-lab", appauthor=False)) / "models"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="RAG_LAB_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    # Where indexes, caches and run checkpoints live, and where named datasets are looked up.
    data_dir: Path = Path(".rag_lab")
    datasets_dir: Path = Path("datasets")
    # Local model files (the joined 1.1 GB GGUF, verification stamps): once per machine, shared by every data folder.
    models_dir: Path = Field(default_factory=default_models_dir)

    embed_provider: str = "local"  # a name in EMBED_PROVIDERS
    embed_model: str | None = None
    embed_batch_size: int = Field(32, ge=1)
    # The local model's numeric path; each is its own embedding id (indexes never mix them).
    embed_backend: EmbedBackend = "openvino"
    # openai_compatible embeddings: the server's address and (optional) key.
    embed_base_url: str | None = None
    embed_api_key: SecretStr | None = None

    llm_provider: str = "local"  # a name in LLM_PROVIDERS
    llm_model: str | None = None
    agent_model: str | None = None
    llm_temperature: float = Field(0.0, ge=0.0, le=2.0)
    llm_max_tokens: int = Field(512, ge=1)
    # CPU threads of the local LLM (None: every core; llama.cpp's own default is half of them).
    llm_threads: int | None = Field(None, ge=1)
    # openai_compatible LLMs (vLLM, Ollama, llama.cpp's server, TGI …): the server's address, its
    # (optional) key and the model's context window, which such servers do not report.
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_context_window: int = Field(8192, ge=256)
    # `--judge openai_compatible:MODEL`: the judge's own server (default: RAG_LAB_LLM_BASE_URL).
    judge_base_url: str | None = None
    request_timeout: float = Field(60.0, gt=0)
    # Retries per provider call (the SDK's, the only retry layer): at most 1 + max_retries attempts.
    max_retries: int = Field(3, ge=0, le=10)
    # Seconds the judged metrics of one sample may take together; a metric still running then is
    # cut off and recorded as failed (NaN with the reason), so a hanging judge cannot stall a run.
    # None: 300 s for a provider judge; for the in-process local judge (no network to hang on, only a
    # slow CPU: minutes per metric on 2 cores) 900 s per judged metric of the sample.
    judge_deadline: float | None = Field(None, gt=0)
    # How the judge verifies statements (faithfulness, factual correctness): RAGAS's one call for all
    # statements ("batch"), one call per statement ("per_statement"), or one call with a quote of the
    # context before each verdict ("grounded"); "auto": probability for the schema-constrained local
    # judge, RAGAS's own batch prompt for provider judges. Measured in benchmarks/judge_validation.py.
    # "probability": per statement, evidence chosen by code, numbers checked by code, and the verdict
    # as P(Yes) of one constrained token (local judge only).
    judge_nli: Literal["auto", "batch", "per_statement", "grounded", "probability"] = "auto"
    # Probability verdicts: passages of evidence per statement (0: the whole context is the premise),
    # and whether a value no context states decides "unsupported" ("code"), a value the chosen passages
    # do not state ("evidence": stricter), or the model decides every statement ("off").
    judge_evidence: int = Field(3, ge=0, le=20)
    judge_numbers: Literal["code", "evidence", "off"] = "code"
    # Probability verdicts: a negated statement whose evidence has no negation is unsupported ("code");
    # a name or acronym whose words no context contains is unsupported ("code"). See judge/rules.py.
    judge_negation: Literal["code", "off"] = "code"
    judge_names: Literal["code", "off"] = "code"
    # Probability verdicts: a statement a context contains word for word (a quoted evidence line) is
    # stated, without asking the model ("code"). See judge/verbatim.py.
    judge_verbatim: Literal["code", "off"] = "code"
    # Probability verdicts: a figure a context's table holds only in another row or column than the
    # statement's own words place it ("bi-weekly … $4,449", the Bi-Monthly cell) is unsupported
    # ("code"). See judge/table_cells.py.
    judge_cells: Literal["code", "off"] = "code"
    # Probability verdicts: faithfulness as the probability that every statement of the answer is stated
    # ("all": product P; an answer is faithful when all its claims are) or the expected share of stated
    # statements ("share": RAGAS's ratio, mean P). Chosen on the natural answers' tune half
    # (docs/evaluation.md).
    judge_faithfulness_score: Literal["all", "share"] = "all"
    # Probability verdicts of factual correctness: each claim against its best passages of the other
    # text ("passages") or against the whole other text, one premise per direction ("whole").
    judge_claims_evidence: Literal["passages", "whole"] = "passages"
    # Probability verdicts: the model's P(yes) as is ("off") or contrasted with its P(yes) for the
    # statement without a premise ("no-premise": how much the premise moves it; judge/probability.py).
    judge_contrastive: Literal["off", "no-premise"] = "off"
    # LLM context recall and LLM context precision with probability verdicts ("probability": the
    # reference's sentences verified against the contexts, judge/probability_context.py) or RAGAS's
    # generated replies ("ragas"); "auto": probability whenever faithfulness uses probability verdicts.
    judge_context: Literal["auto", "ragas", "probability"] = "auto"
    # How faithfulness splits the answer into statements: RAGAS's prompt ("ragas") or sentence by
    # sentence, every sentence of the answer with its own statements ("by_sentence": none skipped);
    # "auto": code for the local judge with probability verdicts, else RAGAS's prompt. Measured in
    # benchmarks/judge_validation.py.
    # "code": sentences and ";" clauses split by code, for faithfulness and factual correctness (no LLM call).
    judge_statements: Literal["auto", "ragas", "by_sentence", "code"] = "auto"
    # A local model (name or alias) that splits answers and references into statements and claims,
    # the judge keeping the verdicts; None: the judge splits. Measured in benchmarks/judge_validation.py.
    judge_splitter: str | None = None
    # Requests per minute to one provider endpoint (generator and judge alike, retries included),
    # shared by every worker of a run (a token bucket); None: no limit.
    llm_rpm: float | None = Field(None, gt=0)
    # LLM calls in flight of the contextual-index pass (`index --contextual llm`, `ablate --concurrency`);
    # None: 1 for the in-process local model, 8 for remote providers (as `eval --concurrency`).
    llm_concurrency: int | None = Field(None, ge=1)
    # `eval` stops after this many samples in a row fail with the same provider error (0: never).
    max_consecutive_failures: int = Field(5, ge=0)

    # Query-focused compression of the chunks before the answer prompt (rag_lab.answer.compress):
    # "auto" = on for the local models, whose reading of long tables fails (benchmarks/offline_models.py).
    compress: Literal["auto", "on", "off"] = "auto"
    compress_lines: int = Field(12, ge=1, le=200)
    # How the generator answers (rag_lab.answer.evidence_answer): "evidence" = from a few selected
    # lines, figures only as the evidence writes them; "free" = from the chunks, free-form;
    # "auto" = evidence for the local models, free for cloud providers.
    answer_style: Literal["auto", "evidence", "free"] = "auto"

    chunk_words: int = Field(500, ge=20)
    chunk_overlap_words: int = Field(0, ge=0)

    openai_api_key: SecretStr | None = Field(None, validation_alias=_alias("OPENAI_API_KEY"))
    groq_api_key: SecretStr | None = Field(None, validation_alias=_alias("GROQ_API_KEY"))
    aws_region: str | None = Field(
        None, validation_alias=_alias("AWS_REGION", "AWS_DEFAULT_REGION")
    )

    # Embedded vector engine when QDRANT_URL is unset: Qdrant Edge (default) or qdrant-client local mode.
    vector_backend: Literal["edge", "local"] = "edge"
    qdrant_url: str | None = Field(None, validation_alias=_alias("QDRANT_URL"))
    qdrant_api_key: SecretStr | None = Field(None, validation_alias=_alias("QDRANT_API_KEY"))
    # A Qdrant server/cluster's collection layout (QDRANT_URL only; unset: the server's defaults):
    # shards spread the points over nodes, replicas keep each shard on that many nodes, and an
    # upsert returns once that many replicas applied it (rag-lab upserts with wait=true).
    qdrant_shards: int | None = Field(None, ge=1)
    qdrant_replication_factor: int | None = Field(None, ge=1)
    qdrant_write_consistency: int | None = Field(None, ge=1)

    kendra_index_id: str | None = Field(None, validation_alias=_alias("KENDRA_INDEX_ID"))
    kendra_region: str | None = Field(None, validation_alias=_alias("KENDRA_REGION"))
    # Passages Kendra's Retrieve API returns for `ask`/`chat` (the seed: top 5, no rerank, all to the LLM).
    kendra_top_k: int = Field(5, ge=1, le=100, validation_alias=_alias("KENDRA_TOP_K", "RAG_LAB_KENDRA_TOP_K"))

    @field_validator("qdrant_url", "kendra_index_id", "kendra_region", "aws_region", "embed_model",
                     "llm_model", "agent_model", "llm_threads", "llm_base_url", "embed_base_url",
                     "judge_base_url", "llm_rpm", "llm_concurrency", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("llm_provider", "embed_provider")
    @classmethod
    def _known_provider(cls, value: str, info) -> str:
        table = LLM_PROVIDERS if info.field_name == "llm_provider" else EMBED_PROVIDERS
        if value not in table:  # worded as pydantic words a Literal's choices
            raise PydanticCustomError("literal_error", "Input should be {expected}",
                                      {"expected": one_of(repr(name) for name in table)})
        return value

    @property
    def llm_is_local(self) -> bool:
        """The generator runs in this process, offline (its provider row says)."""
        return LLM_PROVIDERS[self.llm_provider].local

    @field_validator("models_dir", mode="before")
    @classmethod
    def _models_dir_or_default(cls, value: object) -> object:
        if value is None or (isinstance(value, str) and not value.strip()):
            return default_models_dir()
        return Path(value).expanduser()

    @model_validator(mode="after")
    def _overlap_below_size(self) -> "Settings":
        if self.chunk_overlap_words >= self.chunk_words:
            raise ValueError(
                f"chunk_overlap_words ({self.chunk_overlap_words}) must be smaller than "
                f"chunk_words ({self.chunk_words})"
            )
        return self

    @property
    def embed_model_name(self) -> str:
        if self.embed_model:
            return self.embed_model
        spec = EMBED_PROVIDERS.get(self.embed_provider)
        if spec is None or spec.default_model is None:  # a server of one's own: no default model
            raise ConfigError(f"The {self.embed_provider} embedding provider needs a model name",
                              "set RAG_LAB_EMBED_MODEL to the model as the server names it")
        return spec.default_model

    @property
    def llm_model_name(self) -> str:
        if self.llm_model:
            return self.llm_model
        spec = LLM_PROVIDERS.get(self.llm_provider)
        if spec is None or spec.default_model is None:
            raise ConfigError(f"The {self.llm_provider} LLM provider needs a model name",
                              "set RAG_LAB_LLM_MODEL to the model as the server names it")
        return spec.default_model

    @property
    def context_lines(self) -> int | None:
        """Lines the answer prompt keeps (None: whole chunks), see ``compress``."""
        on = self.compress == "on" or (self.compress == "auto" and self.llm_is_local)
        return self.compress_lines if on else None

    @property
    def resolved_answer_style(self) -> str:
        """``evidence`` or ``free``, see ``answer_style`` (the answer path resolves ``auto`` by the LLM
        itself, :func:`rag_lab.answer.evidence_answer.resolve_answer_style`: the same for the configured one)."""
        if self.answer_style != "auto":
            return self.answer_style
        return "evidence" if self.llm_is_local else "free"

    @property
    def kendra_region_name(self) -> str | None:
        return self.kendra_region or self.aws_region

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "indexes"

    @property
    def cache_dir(self) -> Path:
        return self.data_dir / "cache"


def llm_api_key(settings: Settings, provider: str) -> SecretStr | None:
    """``provider``'s API key from the settings; a ConfigError naming its variable when the provider
    requires one and it is missing or blank."""
    spec = LLM_PROVIDERS[provider]
    if spec.key_setting:
        key = getattr(settings, spec.key_setting)
    elif spec.key_env:  # read as pydantic-settings reads a field: the environment first, then .env
        import os

        from dotenv import dotenv_values

        value = os.environ.get(spec.key_env) or dotenv_values(settings.model_config["env_file"]).get(spec.key_env)
        key = SecretStr(value) if value else None
    else:
        key = None
    if spec.key_required and (key is None or not key.get_secret_value().strip()):
        raise ConfigError(f"The {provider} LLM provider needs an API key",
                          f"set {spec.key_env} (in the environment or .env)")
    return key


def load_settings(**overrides: object) -> Settings:
    """Build settings, turning pydantic's validation errors into one readable ConfigError."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "settings"
            if where == "settings":  # a cross-field check: its input is every setting, secrets included
                problems.append(f"settings: {err['msg']}")
                continue
            env = f"RAG_LAB_{where.upper()}"
            shown = "<hidden>" if "key" in where.lower() else repr(err.get("input"))
            problems.append(f"{env}: {err['msg']} (got {shown})")
        raise ConfigError(
            "Invalid configuration: " + "; ".join(problems),
            "fix the environment variable or the .env entry named above",
        ) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()


ANSWER_STYLES = ("auto", "evidence", "free")


def with_answer_style(settings: Settings, style: str | None) -> Settings:
    """``settings`` with an answer style (``--answer-style`` / ``answer_style=``) applied; None leaves them."""
    if style is None:
        return settings
    if style not in ANSWER_STYLES:
        raise ConfigError(f"Unknown answer style {style!r}", f"use one of: {', '.join(ANSWER_STYLES)}")
    return settings.model_copy(update={"answer_style": style})
