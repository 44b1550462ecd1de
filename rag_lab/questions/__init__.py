"""Where a dataset's questions come from: the human ``qa.jsonl``, synthetic ones made from its chunks
with a model (``synth``), or any question file. Nothing here scores anything."""

from rag_lab.questions.records import ORIGIN, SYNTHETIC_FILE, SynthOutcome
from rag_lab.questions.synth import SynthStopped, synth

__all__ = ["ORIGIN", "SYNTHETIC_FILE", "SynthOutcome", "SynthStopped", "synth"]
