"""``synth(dataset, ...)``: the question file a dataset without human questions can be evaluated with.

Writes ``qa.synthetic.jsonl`` beside the dataset's files (or ``out``) and its summary; never the
human ``qa.jsonl``. See :mod:`.generate` for the loop and :mod:`.checks` for what is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.errors import ConfigError, DatasetError, RagLabError
from rag_lab.evaluate.questions.calibration import overlap_bound
from rag_lab.evaluate.questions.estimate import SynthEstimate, estimate
from rag_lab.evaluate.questions.generate import generate
from rag_lab.evaluate.questions.kinds import KINDS, default_kinds
from rag_lab.evaluate.questions.records import SYNTHETIC_FILE, SynthOutcome, write_outcome
from rag_lab.evaluate.questions.sampling import corpus_chunks, spread_order


class SynthStopped(RagLabError):
    """The run stopped before ``n`` questions (provider failure, budget, Ctrl-C); what was made is written."""


def synthetic_path(dataset: Dataset) -> Path:
    """Where a dataset's synthetic questions live: ``qa.synthetic.jsonl`` in its folder."""
    return dataset.root / SYNTHETIC_FILE


def human_path(dataset: Dataset) -> Path:
    return dataset.qa_file if dataset.qa_file is not None else dataset.root / "qa.jsonl"


def output_path(dataset: Dataset, out: str | Path | None) -> Path:
    """``out`` or the default; the human question file is refused (it is never written)."""
    path = Path(out) if out is not None else synthetic_path(dataset)
    if path.resolve() == human_path(dataset).resolve() or path.name == "qa.jsonl":
        raise ConfigError(f"--out {path} is a human question file ({path.name}): synth never writes or replaces it",
                          f"leave --out out (writes {synthetic_path(dataset)}) or name another file")
    return path


def _human_questions(dataset: Dataset) -> list[str]:
    try:
        return list(dataset.load_queries().values()) if dataset.has_qa or dataset.has_beir_queries else []
    except RagLabError:
        return []


def _kinds(dataset: Dataset, kinds: tuple[str, ...] | None) -> tuple[str, ...]:
    if kinds is None:
        return default_kinds(_human_questions(dataset))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ConfigError(f"unknown question kind(s): {', '.join(unknown) or '(none given)'}",
                          f"choose from {', '.join(KINDS)}")
    return tuple(kinds)


def synth(dataset: Dataset, settings: Settings, *, n: int = 100, seed: int = 0, out: str | Path | None = None,
          kinds: tuple[str, ...] | None = None, dry_run: bool = False, max_cost: float | None = None,
          llm: Any = None, progress: bool = True) -> SynthOutcome | SynthEstimate:
    """Make ``n`` checked questions from ``dataset``'s chunks (seeded by ``seed``), write them to
    ``out`` and return the outcome (``dry_run``: the estimate, nothing called or written). A run that
    stops early writes what it made, then raises :class:`SynthStopped` (run again to resume)."""
    if not isinstance(n, int) or n < 1:
        raise ConfigError(f"--n must be a whole number ≥ 1, got {n!r}", "e.g. --n 100")
    if max_cost is not None and not (isinstance(max_cost, (int, float)) and max_cost >= 0):
        raise ConfigError(f"--max-cost must be a number ≥ 0 (USD), got {max_cost!r}", "e.g. --max-cost 0.50")
    path = output_path(dataset, out)
    chosen = _kinds(dataset, kinds)
    chunks = corpus_chunks(dataset, settings)
    if n > len(chunks):
        raise DatasetError(f"--n {n} is more than {dataset.name!r} can make: {len(chunks)} chunk(s) to ask about "
                           "(one question per chunk)", f"use --n {len(chunks)} or fewer")
    order = spread_order(chunks, seed)
    generator, price, llm = _generator(settings, llm, dry_run)
    if dry_run:
        bound = overlap_bound(dataset, settings, chunks)
        return estimate(order, n, kinds=chosen, generator=generator, cache_path=settings.cache_dir / "synth.sqlite",
                        max_overlap=bound.max_overlap, price=price)
    outcome = generate(dataset, settings, order, n, llm=llm, generator=generator, kinds=chosen, progress=progress,
                       max_cost=max_cost, price=price)
    outcome.extra = {"dataset": dataset.name, "seed": seed, "kinds": list(chosen), "chunks_available": len(chunks)}
    write_outcome(outcome, path)
    if outcome.stopped:
        raise SynthStopped(f"{outcome.stopped}: {outcome.made} of {n} questions made, written to {path}",
                           "run the same rag-lab synth command again: cached replies are reused and it carries on")
    return outcome


def _generator(settings: Settings, llm: Any, dry_run: bool) -> tuple[str, Any, Any]:
    """The generator's identity (cache key and output field), its list price, and the LLM (built
    unless given; a dry run names the configured one without loading it)."""
    from rag_lab.models.llm.identity import configured_name, llm_identity, llm_name, local_model_name
    from rag_lab.models.pricing import price_for

    if llm is not None:
        name = llm_identity(llm)
    elif settings.llm_provider == "local":  # named as the built LLM would be, without loading it
        name = llm_name("local", local_model_name(settings.llm_model_name, settings.llm_model_name))
    else:
        name = configured_name(settings, settings.llm_model_name)
    provider, _, model = name.partition(":")
    price = price_for(provider.partition("@")[0], model)
    if llm is None and not dry_run:
        from rag_lab.models.llm.factory import get_llm

        llm = get_llm(settings)
        name = llm_identity(llm)
    return name, price, llm
