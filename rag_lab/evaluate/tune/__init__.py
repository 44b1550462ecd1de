"""``rag-lab tune``: a configuration chosen on the dev split, confirmed on the rest, written as TOML.

:mod:`.select` (the one-standard-error rule and the cost order) · :mod:`.scores` (the selection
metrics from the ablation grid) · :mod:`.confirm` (the rest split's paired test) · :mod:`.run` (the
steps, timed) · :mod:`.report` (what the CLI prints) · :mod:`.query_gen` (LLM query rewrites as a lever).
"""

from rag_lab.evaluate.tune.run import TUNE_SPEC, TuneResult, tune

__all__ = ["TUNE_SPEC", "TuneResult", "tune"]
