"""A recommended retrieval configuration in a small TOML file (written by ``rag-lab tune``).

``search``, ``ir``, ``ask`` and ``eval`` take it with ``--config FILE`` (flags given on the command
line still win); a notebook calls :func:`read_tuned_config` and passes
:meth:`TunedConfig.retrieval_params` / :meth:`TunedConfig.answer_params` on. The file::

    [retrieval]
    mode = "fusion"
    rrf_k = 10
    prefetch = 50
    dense_weight = 1.0
    sparse_weight = 1.0
    max_per_doc = 1        # 0 = no cap
    top_k = 5              # chunks kept: search's --top-k, the generator's context (ask/eval --top-n)
    num_queries = 1        # > 1: the LLM writes num_queries - 1 rewrites, fused by RRF

    [provenance]           # what chose it (free-form; read back as a dict)

The grid's top-k is the number of chunks the reader (or the generator) gets: ``search`` shows that
many; ``ask``/``eval`` retrieve their usual candidates and give the first ``top_k`` to the LLM.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rag_lab.errors import ConfigError

FUSED_MODES = ("fusion", "hybrid")


@dataclass(frozen=True)
class TunedConfig:
    mode: str = "hybrid"
    rrf_k: float = 60
    prefetch: int = 100
    dense_weight: float = 1.0
    sparse_weight: float = 1.0
    max_per_doc: int = 0
    top_k: int = 5
    num_queries: int = 1
    provenance: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in FUSED_MODES:
            raise ConfigError(f"tuned configuration: mode must be one of {', '.join(FUSED_MODES)}, got {self.mode!r}",
                              "write mode = \"fusion\" or \"hybrid\"")
        for name in ("prefetch", "top_k", "num_queries"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"tuned configuration: {name} must be ≥ 1", f"fix {name} in the [retrieval] table")
        if self.max_per_doc < 0 or self.rrf_k < 0:
            raise ConfigError("tuned configuration: max_per_doc and rrf_k must be ≥ 0", "fix the [retrieval] table")

    def retrieval_params(self) -> dict:
        """The fused retrievers' parameters (``build_retriever``; ``search``/``ir``)."""
        params = {"rrf_k": self.rrf_k, "prefetch": self.prefetch, "dense_weight": self.dense_weight,
                  "sparse_weight": self.sparse_weight, "max_per_doc": self.max_per_doc or None}
        if self.num_queries > 1:  # the live retrievers search with LLM rewrites too (rag_lab.retrieve.rewrites)
            params["num_queries"] = self.num_queries
        return params

    def answer_params(self) -> dict:
        """``make_answerer`` / ``run_evaluation`` parameters: the retriever's, and the first
        ``top_k`` chunks go to the generator."""
        return {**self.retrieval_params(), "top_n": self.top_k}

    def settings(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "provenance"}

    def describe(self) -> str:
        cap = f"cap {self.max_per_doc}/doc" if self.max_per_doc else "no cap"
        queries = f", {self.num_queries} queries (LLM rewrites)" if self.num_queries > 1 else ""
        return (f"{self.mode} k={self.rrf_k:g} prefetch={self.prefetch} weights={self.dense_weight:g}:"
                f"{self.sparse_weight:g} {cap} top-{self.top_k}{queries}")


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def write_tuned_config(path: Path | str, config: TunedConfig, header: str = "") -> Path:
    """Write ``config`` as TOML (provenance: flat scalars/lists only; nested values as JSON strings)."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines.append("[retrieval]")
    lines += [f"{k} = {_toml_value(v)}" for k, v in config.settings().items()]
    if config.provenance:
        lines += ["", "[provenance]"]
        for k, v in config.provenance.items():
            plain = v if isinstance(v, (bool, int, float, str, list, tuple)) else json.dumps(v, ensure_ascii=False)
            lines.append(f"{k} = {_toml_value(plain)}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_tuned_config(path: Path | str) -> TunedConfig:
    """The configuration in ``path`` (unknown keys are refused: a typo must not pass silently)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--config {path}: cannot read it ({exc})", "write one with `rag-lab tune DATASET`") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--config {path}: not valid TOML ({exc})", "see rag_lab/retrieve/tuned_config.py") from None
    retrieval = data.get("retrieval")
    if not isinstance(retrieval, dict):
        raise ConfigError(f"--config {path}: no [retrieval] table", "write one with `rag-lab tune DATASET`")
    known = set(TunedConfig.__dataclass_fields__) - {"provenance"}
    unknown = sorted(set(retrieval) - known)
    if unknown:
        raise ConfigError(f"--config {path}: unknown key(s) {', '.join(unknown)}", f"known: {', '.join(sorted(known))}")
    return TunedConfig(**retrieval, provenance=dict(data.get("provenance") or {}))


def merged(explicit: dict, config: TunedConfig | None, defaults_from_config: dict) -> dict:
    """``explicit`` options (None = not given) over the config file's values."""
    if config is None:
        return dict(explicit)
    return {**defaults_from_config, **{k: v for k, v in explicit.items() if v is not None}}
