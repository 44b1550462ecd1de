"""Build the judge named by ``--judge`` and adapt it for RAGAS."""

from __future__ import annotations

from typing import Any

from rag_lab.config import Settings
from rag_lab.evaluate.judge.constrained import JUDGE_DESIGN, ConstrainedJudge

# RAGAS's prompts carry their instruction, JSON schema and worked examples (≈1–2k tokens) before the
# input; with five retrieved chunks the NLI prompt of faithfulness reaches ≈4–6k tokens, past the
# generator's 4,096 window, where the judged metrics fail. 16k holds any eval sample
# with room for the reply; the KV cache it reserves is measured in the README (≈0.45 GB on Qwen 1.5B).
JUDGE_N_CTX = 16384


def nli_design(settings: Settings, constrained: bool) -> str:
    """How the judge verifies statements: ``settings.judge_nli``, where "auto" is probability verdicts
    for a schema-constrained judge (the local model: chosen on the validation set's dev
    questions over grounded NLI) and RAGAS's own batch prompt for any other judge."""
    if settings.judge_nli == "auto":
        return "probability" if constrained else "batch"
    return settings.judge_nli


def statement_design(settings: Settings, constrained: bool) -> str:
    """How faithfulness and factual correctness split answers into statements and claims:
    ``settings.judge_statements``, where "auto" is code (sentences and clauses) for the local judge
    with probability verdicts (no generated reply left in those two metrics) and RAGAS's own prompt
    otherwise."""
    if settings.judge_statements == "auto":
        return "code" if constrained and nli_design(settings, constrained) == "probability" else "ragas"
    return settings.judge_statements


def context_design(settings: Settings, constrained: bool) -> str:
    """How LLM context recall and LLM context precision verify: ``settings.judge_context``, where
    "auto" is probability verdicts whenever faithfulness uses them (the local judge's default) and
    RAGAS's generated replies otherwise (:mod:`rag_lab.evaluate.judge.probability_context`)."""
    if settings.judge_context == "auto":
        return "probability" if nli_design(settings, constrained) == "probability" else "ragas"
    return settings.judge_context


def judge_id(settings: Settings) -> str:
    """The judge's name in manifests and the dry run (``settings`` = the judge's settings); judged
    scores' cache keys use ``llm_identity`` of the built judge and its design (``Scorer.judge_key``)."""
    from rag_lab.evaluate.plan.answering import model_id

    base = model_id(settings)  # identity.llm_name spelling: provider[@endpoint]:model
    if settings.llm_is_local:
        base = f"{base}+{JUDGE_DESIGN}@{JUDGE_N_CTX}"
    design = nli_design(settings, constrained=settings.llm_is_local)
    if design == "grounded":  # with its version: a changed prompt is another judge
        from rag_lab.evaluate.judge.grounded import GroundedNLIPrompt

        design = GroundedNLIPrompt.design
    elif design == "probability":  # with its options: another evidence size or numeric rule is another judge
        from rag_lab.evaluate.judge.probability import ProbabilityNLIPrompt

        from rag_lab.evaluate.judge.versions import digest, probability_options

        design = ProbabilityNLIPrompt.version + probability_options(settings)  # the declared verdict settings
        design += "-ctx" * (context_design(settings, constrained=settings.llm_is_local) == "probability")

        design += f"-r{digest()}"  # every rule's version (the cache keys hold those each metric uses)
    if design != "batch":
        base += "+" + design.replace("_", "-")
    statements = statement_design(settings, constrained=settings.llm_is_local)
    if statements == "by_sentence":
        from rag_lab.evaluate.judge.by_sentence import SentenceStatementPrompt

        base += "+" + SentenceStatementPrompt.design
    elif statements == "code":
        from rag_lab.evaluate.judge.code_split import CodeStatementPrompt

        base += "+" + CodeStatementPrompt.design
    if settings.judge_splitter:
        base += f"+split-by:{splitter_name(settings)}"
    return base


def splitter_name(settings: Settings) -> str | None:
    """The splitter's model name (an alias resolved), or None (see :mod:`rag_lab.evaluate.judge.splitter`)."""
    from rag_lab.models.llm.catalog import lookup

    return lookup(settings.judge_splitter).name if settings.judge_splitter else None


def build_judge(settings: Settings) -> Any:
    """The judge's LlamaIndex LLM: the local model with a window for RAGAS's prompts, or the
    configured provider's model (unchanged)."""
    if settings.llm_is_local:
        from rag_lab.models.llm.catalog import resolve_model_file
        from rag_lab.models.llm.factory import resolve_model
        from rag_lab.models.llm.local_llm import LocalLLM

        name = resolve_model(settings)
        path, _info = resolve_model_file(name, settings.models_dir)
        llm = LocalLLM(model_name=name, model_path=str(path), temperature=0.0, max_tokens=settings.llm_max_tokens,
                       context_window=JUDGE_N_CTX, threads=settings.llm_threads)
        _ = llm.runtime  # load now, not inside the first judged metric
        return llm
    from rag_lab.models.llm import get_llm

    return get_llm(settings)


def judge_llm_for_ragas(llm: Any) -> Any:
    """What RAGAS's metrics get: schema-constrained calls when ``llm`` supports them."""
    if getattr(llm, "supports_constrained_output", False):
        return ConstrainedJudge(llm)
    from rag_lab.evaluate.judge.ragas_legacy import llamaindex_judge

    return llamaindex_judge(llm, run_config=single_attempt())


def single_attempt():
    """RAGAS retries every exception 10 times by default, on top of the SDK's own retries (and
    even a 401): one attempt here, the provider SDK is the one retry layer."""
    from ragas.run_config import RunConfig

    return RunConfig(max_retries=1)
