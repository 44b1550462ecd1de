"""A recommended retrieval configuration in a small TOML file (written by ``rag-lab tune``).

``search``, ``ir``, ``ask``, ``eval`` and ``ablate`` take it with ``--config FILE`` (flags given on the
command line still win), the Python API with ``config=`` (a path or a :class:`TunedConfig`). The
file's keys are the command line's names, with the same meaning everywhere::

    [retrieval]
    mode = "fusion"
    fusion_k = 10          # --fusion-k: RRF k, ranks from 1
    prefetch = 50          # --prefetch: candidates per leg
    dense_weight = 1.0
    sparse_weight = 1.0
    max_per_doc = 1        # --max-per-doc: 0 = no cap
    top_k = 5              # --top-k: chunks the retriever returns (search's results, ask/eval's candidates)
    top_n = 5              # --top-n: chunks the LLM reads (left out: the command's default, 7)
    num_queries = 1        # > 1: the LLM writes num_queries - 1 rewrites, fused by RRF
    year_boost = 0.5       # --year-boost (left out: off)
    contextual = "llm"     # --contextual: the contextual index variant (left out: the plain index)

    [provenance]           # what chose it (free-form; read back as a dict; ``dataset`` is checked)

So one file gives ``search`` and ``ask`` the same chunks: ``ask`` retrieves what ``search`` shows and
gives the first ``top_n`` of them to the LLM. The keys and their defaults are
:class:`~rag_lab.retrieve.configuration.RetrievalConfig`'s.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.errors import ConfigError, RagLabWarning, warn_at_caller
from rag_lab.retrieve.configuration import RetrievalConfig, flag_levers, lever_fields, renamed_hint



@dataclass(frozen=True)
class TunedConfig(RetrievalConfig):
    """A :class:`RetrievalConfig` with what chose it (``provenance``), checked as a file's must be."""

    provenance: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        from rag_lab.retrieve.registry import fused_modes

        if self.mode not in fused_modes():
            raise ConfigError(f"tuned configuration: mode must be one of {', '.join(fused_modes())}, got {self.mode!r}",
                              f"write mode = {' or '.join(repr(m) for m in fused_modes())}".replace("'", '"'))
        for name in ("prefetch", "top_k", "num_queries") + (("top_n",) if self.top_n is not None else ()):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"tuned configuration: {name} must be ≥ 1", f"fix {name} in the [retrieval] table")
        if self.max_per_doc < 0 or self.fusion_k < 0:
            raise ConfigError("tuned configuration: max_per_doc and fusion_k must be ≥ 0", "fix the [retrieval] table")
        if self.year_boost is not None and self.year_boost < 0:
            raise ConfigError("tuned configuration: year_boost must be ≥ 0", "fix year_boost in the [retrieval] table")

    def retrieval_params(self) -> dict:
        """The fused levers (``build_retriever``'s parameters besides ``top_k``)."""
        params = {lever: value for lever in flag_levers() if (value := getattr(self, lever)) is not None}
        params["max_per_doc"] = self.max_per_doc or None
        if self.num_queries > 1:  # the live retrievers search with LLM rewrites too (rag_lab.retrieve.rewrites)
            params["num_queries"] = self.num_queries
        return params

    def answer_params(self) -> dict:
        """``make_answerer`` / ``run_evaluation`` parameters: the retriever's, its ``top_k``, and
        ``top_n`` (when the file sets it) for the LLM."""
        top_n = {} if self.top_n is None else {"top_n": self.top_n}
        return {**self.retrieval_params(), "top_k": self.top_k, **top_n}

    def settings(self) -> dict:
        """The file's ``[retrieval]`` table: every field set (a field not ``written`` at its default left out)."""
        return {f.name: getattr(self, f.name) for f in lever_fields() if getattr(self, f.name) is not None
                and (f.metadata.get("written", True) or getattr(self, f.name) != f.default)}

    def describe(self) -> str:
        """The levers in the command line's names, e.g. ``hybrid fusion_k 5 prefetch 25 …``."""
        cap = f"max_per_doc {self.max_per_doc}" if self.max_per_doc else "max_per_doc 0 (no cap)"
        top_n = f" top_n {self.top_n}" if self.top_n is not None else ""
        queries = f" num_queries {self.num_queries} (LLM rewrites)" if self.num_queries > 1 else ""
        said = {"mode", "fusion_k", "prefetch", "dense_weight", "sparse_weight", "max_per_doc", "top_k", "top_n",
                "num_queries"}
        more = "".join(f" {f.name} {getattr(self, f.name)}" for f in lever_fields()
                       if f.name not in said and getattr(self, f.name) != f.default)
        return (f"{self.mode} fusion_k {self.fusion_k:g} prefetch {self.prefetch} weights {self.dense_weight:g}:"
                f"{self.sparse_weight:g} {cap} top_k {self.top_k}{top_n}{queries}{more}")

    @property
    def dataset(self) -> str | None:
        """The dataset the file was tuned on (its provenance), if it says."""
        return self.provenance.get("dataset")


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
    if renamed := [hint for key in retrieval if (hint := renamed_hint(key))]:
        raise ConfigError(f"--config {path}: {'; '.join(renamed)} (the command line's name)",
                          "rename the key in the [retrieval] table")
    unknown = sorted(set(retrieval) - known)
    if unknown:
        raise ConfigError(f"--config {path}: unknown key(s) {', '.join(unknown)}", f"known: {', '.join(sorted(known))}")
    return TunedConfig(**retrieval, provenance=dict(data.get("provenance") or {}))


def load_config(config: TunedConfig | str | Path | None) -> TunedConfig | None:
    """``config=`` of the Python API and ``--config`` of the CLI: a file's path, a :class:`TunedConfig`, or None."""
    if config is None or isinstance(config, TunedConfig):
        return config
    if isinstance(config, (str, Path)):
        return read_tuned_config(config)
    raise TypeError(f"config must be a path to a TOML file (rag-lab tune) or a TunedConfig, got {type(config).__name__}")


def announce(config: TunedConfig, source: TunedConfig | str | Path) -> str:
    """The line saying which file applies which levers (the CLI prints it on stderr)."""
    return f"config {_named(source)}: {config.describe()}" + (f" (tuned on {config.dataset})" if config.dataset else "")


def warn_if_tuned_elsewhere(config: TunedConfig, source: TunedConfig | str | Path, dataset: str | None) -> None:
    """A :class:`RagLabWarning` when ``config`` was tuned on another dataset than ``dataset``."""
    tuned_on = config.dataset
    if dataset is not None and tuned_on and tuned_on != dataset:
        warn_at_caller(RagLabWarning(
            f"config {_named(source)} was tuned on {tuned_on}, not {dataset}: its levers may not suit this corpus "
            f"(tune this one: rag-lab tune {dataset})"))


def _named(source: TunedConfig | str | Path) -> str:
    return "a TunedConfig" if isinstance(source, TunedConfig) else str(source)


def merged(explicit: dict, config: TunedConfig | None, defaults_from_config: dict) -> dict:
    """``explicit`` options (None = not given) over the config file's values."""
    if config is None:
        return dict(explicit)
    return {**defaults_from_config, **{k: v for k, v in explicit.items() if v is not None}}


def fused_levers(config: TunedConfig | None, **given) -> dict:
    """The fused levers (:func:`~rag_lab.retrieve.configuration.flag_levers`; None = not given) over the
    config's values; unset ones left out, and ``max_per_doc`` 0 (no cap) with them: the same run, and
    the same cache keys, as not giving it."""
    params = merged(given, config, config.retrieval_params() if config else {})
    params["max_per_doc"] = params.get("max_per_doc") or None
    return {k: v for k, v in params.items() if v is not None}


def answering_params(config: TunedConfig | None, top_k: int | None = None, top_n: int | None = None,
                     contextual: str | None = "none", **levers) -> dict:
    """What ``ask`` and ``eval`` (CLI and API alike) give the answerers: ``top_k`` (the retriever's),
    ``top_n`` (the LLM's), the fused levers and the contextual variant, the config filling what is
    not given; unset ones left out (the library's defaults apply)."""
    sizes = merged({"top_k": top_k, "top_n": top_n}, config,
                   {"top_k": config.top_k, "top_n": config.top_n} if config else {})
    if contextual in (None, "none") and config is not None:
        contextual = config.contextual
    variant = {"contextual": contextual} if contextual not in (None, "none") else {}
    return {k: v for k, v in {**sizes, **fused_levers(config, **levers), **variant}.items() if v is not None}
