"""The one module that uses RAGAS's legacy (pre-``ragas.metrics.collections``) judged-metric interface.

Why the judged metrics (faithfulness, response relevancy, LLM context precision and recall, factual
correctness) stay on RAGAS's legacy ``SingleTurnMetric`` classes, although RAGAS 0.4 has modern ones:

- The modern metrics accept only an ``InstructorBaseRagasLLM``. The schema-constrained local judge
  (:class:`~rag_lab.evaluate.judge.constrained.ConstrainedJudge`) is one and would fit, but the provider
  judges (Groq, Bedrock Converse, OpenAI, any OpenAI-compatible server) are LlamaIndex LLMs: RAGAS 0.4.3
  has no modern adapter for a LlamaIndex LLM (``llm_factory`` takes an OpenAI/LiteLLM-style client), so
  the local and the provider judge would score on two different code paths.
- Our judge designs hook into the legacy classes: grounded and per-statement NLI replace their
  ``PydanticPrompt`` attributes, statements by sentence and the external splitter replace
  ``_create_statements`` (``judge/*.py``). The modern metrics are separate classes with other prompt
  objects (``BasePrompt.to_string`` then ``llm.agenerate``): every design would need rewriting, and the
  judge-agreement measured on the validation set and every cached judged score (keyed by these prompts)
  would no longer hold.

So the legacy path is kept here, behind one adapter: the metric classes come from the modules they live
in (``ragas.metrics`` re-exports them with a DeprecationWarning), and a LlamaIndex LLM that cannot
constrain its output is wrapped in RAGAS's ``LlamaIndexLLMWrapper`` (deprecated in 0.4; its warning is
silenced here and only here). The non-LLM metrics are modern (:mod:`rag_lab.evaluate.metrics.modern`).
"""

from __future__ import annotations

import importlib
import os
import warnings
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before ragas is imported: no analytics calls

# The legacy judged metric classes, by name, in the RAGAS module each lives in.
LEGACY_METRIC_MODULES = {
    "Faithfulness": "ragas.metrics._faithfulness",
    "ResponseRelevancy": "ragas.metrics._answer_relevance",
    "LLMContextPrecisionWithReference": "ragas.metrics._context_precision",
    "LLMContextRecall": "ragas.metrics._context_recall",
    "FactualCorrectness": "ragas.metrics._factual_correctness",
}


def legacy_metric_class(name: str) -> type:
    """RAGAS's legacy judged metric class ``name`` (e.g. ``"Faithfulness"``)."""
    return getattr(importlib.import_module(LEGACY_METRIC_MODULES[name]), name)


def llamaindex_judge(llm: Any, run_config: Any) -> Any:
    """RAGAS's legacy LlamaIndex adapter around ``llm``, minus the per-call n/temperature/stop kwargs:
    the judge keeps its configured settings (reasoning models reject a temperature; Bedrock an ``n``)."""
    from ragas.llms.base import LlamaIndexLLMWrapper  # the class (ragas.llms exports a deprecation proxy)

    class JudgeLLM(LlamaIndexLLMWrapper):
        def check_args(self, n, temperature, stop, callbacks):
            return {}

    with warnings.catch_warnings():  # deprecated in RAGAS 0.4: why it is still used, see the module doc
        warnings.simplefilter("ignore", DeprecationWarning)
        return JudgeLLM(llm, run_config=run_config)
