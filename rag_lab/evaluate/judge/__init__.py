"""LLM judges for RAGAS's judged metrics.

``judge_llm_for_ragas`` is what the metrics get: a ``ConstrainedJudge`` (every call constrained to
the prompt's output schema) for LLMs that take a JSON schema, RAGAS's LlamaIndex adapter otherwise.
``build_judge`` / ``judge_id`` make the judge named by ``--judge PROVIDER[:MODEL]``; the local one
gets a context window sized for RAGAS's prompts (see ``JUDGE_N_CTX``).
"""

from __future__ import annotations

from rag_lab.evaluate.judge.constrained import ConstrainedJudge, JudgeCallError, JudgeStats
from rag_lab.evaluate.judge.factory import JUDGE_DESIGN, JUDGE_N_CTX, build_judge, judge_id, judge_llm_for_ragas

__all__ = ["JUDGE_DESIGN", "JUDGE_N_CTX", "ConstrainedJudge", "JudgeCallError", "JudgeStats", "build_judge",
           "judge_id", "judge_llm_for_ragas"]
