"""A second local model that splits answers into statements and claims.

Faithfulness and factual correctness ask the judge two things: split a text into statements (claims),
then verify each. ``RAG_LAB_JUDGE_SPLITTER`` names a local model (e.g. the 0.5B) for the first step;
the judge keeps the verdicts. Splitting is the cheaper, more mechanical step, so a smaller model
there could save time without touching the verdicts: measured in benchmarks/judge_validation.py.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from rag_lab.config import Settings

# The metric fields RAGAS splits with (each holds a prompt; other metrics do not split).
SPLIT_PROMPT_FIELDS = {"Faithfulness": "statement_generator_prompt", "FactualCorrectness": "claim_decomposition_prompt"}


class OnSplitter:
    """Mixin before a RAGAS split prompt: ``generate`` asks ``splitter`` (a ``ConstrainedJudge``)
    whatever judge the metric passes; the split's replies join the judge's transcript."""

    splitter: Any = None
    design = ""

    async def generate(self, llm: Any, data: Any, *args: Any, **kwargs: Any) -> Any:
        splitter = self.splitter
        if splitter is None:
            return await super().generate(llm, data, *args, **kwargs)  # type: ignore[misc]
        splitter.transcript = getattr(llm, "transcript", None)  # a benchmark reads the split beside the verdicts
        try:
            return await super().generate(splitter, data, *args, **kwargs)  # type: ignore[misc]
        finally:
            splitter.transcript = None


@functools.cache
def _split_class(prompt_class: type) -> type:
    # one named class per RAGAS prompt class: a judged score's cache key holds the replaced prompt's class
    return type(f"{prompt_class.__name__}OnSplitter", (OnSplitter, prompt_class), {"__module__": __name__})


_JUDGES: dict[tuple[str, str, int | None], Any] = {}
_LOCK = threading.Lock()


def _splitter_judge(split: Settings) -> Any:
    """The splitter as a constrained judge, loaded once per process (metrics are built per sample)."""
    from rag_lab.evaluate.judge.constrained import ConstrainedJudge
    from rag_lab.evaluate.judge.factory import build_judge

    key = (str(split.llm_model), str(split.data_dir), split.llm_threads)
    with _LOCK:
        if key not in _JUDGES:
            _JUDGES[key] = ConstrainedJudge(build_judge(split))
        return _JUDGES[key]


def splitter_settings(settings: Settings) -> Settings | None:
    """The local splitter model's settings (the judge's, with the splitter as the model), or None."""
    if not settings.judge_splitter:
        return None
    from rag_lab.evaluate.judge.factory import splitter_name

    return settings.model_copy(update={"llm_provider": "local", "llm_model": splitter_name(settings)})


def use_splitter(metric: Any, settings: Settings) -> Any:
    """``metric`` with its split prompt answered by the splitter model (metrics that do not split,
    or no splitter configured: as is). The model loads once per process."""
    field = SPLIT_PROMPT_FIELDS.get(type(metric).__name__)
    split = splitter_settings(settings)
    if field is None or split is None:
        return metric
    current = getattr(metric, field)
    prompt = _split_class(type(current))()
    prompt.__dict__.update(current.__dict__)  # the replaced prompt's state (e.g. a by-sentence grammar's)
    prompt.splitter = _splitter_judge(split)
    prompt.design = "+".join(filter(None, [getattr(current, "design", ""), f"split-by:{split.llm_model}"]))
    setattr(metric, field, prompt)
    return metric
