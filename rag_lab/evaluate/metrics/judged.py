"""LLM-judged RAGAS metrics, only with a judge (``--judge PROVIDER[:MODEL]`` or settings): the
judge is any configured LlamaIndex LLM, independent of the generator, wrapped for RAGAS (schema-constrained
where the LLM supports it: :mod:`rag_lab.evaluate.judge`). RAGAS's legacy metric classes, for the
reasons in :mod:`rag_lab.evaluate.judge.ragas_legacy`."""

from __future__ import annotations

from rag_lab.evaluate.metrics.base import MetricSpec


def _llm(ctx):
    from rag_lab.evaluate.judge import judge_llm_for_ragas

    if ctx.judge_llm is None:
        raise RuntimeError("this metric needs a judge LLM (--judge PROVIDER[:MODEL])")
    return judge_llm_for_ragas(ctx.judge_llm)


def _metric(class_name: str, **kwargs):
    def build(ctx):
        from rag_lab.evaluate.judge import ConstrainedJudge
        from rag_lab.evaluate.judge.factory import context_design, nli_design, statement_design
        from rag_lab.evaluate.judge.ragas_legacy import legacy_metric_class

        metric = legacy_metric_class(class_name)(llm=_llm(ctx), **kwargs)
        design = nli_design(ctx.settings, constrained=isinstance(metric.llm, ConstrainedJudge))
        if design == "per_statement":
            from rag_lab.evaluate.judge.per_statement import use_per_statement_nli

            use_per_statement_nli(metric)
        elif design == "grounded":
            from rag_lab.evaluate.judge.grounded import use_grounded_nli

            use_grounded_nli(metric)
        elif design == "probability":
            from rag_lab.evaluate.judge.probability import use_probability_verdicts, verdict_store

            options = dict(evidence=ctx.settings.judge_evidence, numbers=ctx.settings.judge_numbers,
                           negation=ctx.settings.judge_negation == "code", names=ctx.settings.judge_names == "code",
                           verbatim=ctx.settings.judge_verbatim == "code", cells=ctx.settings.judge_cells == "code",
                           faithfulness_score=ctx.settings.judge_faithfulness_score,
                           claims_evidence=ctx.settings.judge_claims_evidence,
                           contrastive=ctx.settings.judge_contrastive == "no-premise",
                           store=verdict_store(ctx.settings.cache_dir / "judge_verdicts.sqlite"))
            use_probability_verdicts(metric, **options)
            if context_design(ctx.settings, constrained=True) == "probability":
                from rag_lab.evaluate.judge.probability_context import use_probability_context_verdicts

                use_probability_context_verdicts(metric, **options)
        statements = statement_design(ctx.settings, constrained=isinstance(metric.llm, ConstrainedJudge))
        if statements == "by_sentence":
            from rag_lab.evaluate.judge.by_sentence import use_statements_by_sentence

            use_statements_by_sentence(metric)
        elif statements == "code":
            from rag_lab.evaluate.judge.code_split import use_code_statements

            use_code_statements(metric)
        if ctx.settings.judge_splitter:
            from rag_lab.evaluate.judge.splitter import use_splitter

            use_splitter(metric, ctx.settings)
        from rag_lab.evaluate.judge.not_applicable import use_claims_required

        return use_claims_required(metric)  # a refusal's faithfulness: NaN with its reason, never 0
    return build


def _relevancy(ctx):
    from rag_lab.evaluate.metrics.modern import settings_embedding

    build = _metric("ResponseRelevancy", strictness=1)
    metric = build(ctx)
    # RAGAS's modern embedding interface over the index's model (one attempt per call: the SDK retries)
    metric.embeddings = settings_embedding(ctx.settings)
    metric._ascore = _similarity_off_the_loop(metric)
    return metric


def _similarity_off_the_loop(metric):
    """RAGAS's ``ResponseRelevancy._ascore`` with its embedding step in a worker thread. RAGAS embeds
    the question and the generated questions with *sync* calls inside the coroutine: on the scorer's one
    event loop (shared by every sample in flight) each sample's embedding stalled every other sample's
    judge requests; MiniLM releases the GIL, so in a thread it overlaps them instead."""
    import asyncio

    from ragas.metrics._answer_relevance import ResponseRelevanceInput

    async def ascore(row, callbacks):
        responses = await metric.question_generation.generate_multiple(
            data=ResponseRelevanceInput(response=row["response"]), llm=metric.llm, callbacks=callbacks,
            n=metric.strictness)
        return await asyncio.to_thread(metric._calculate_score, responses, row)
    return ascore


SPECS = [
    MetricSpec("faithfulness", ("response", "retrieved_contexts"), _metric("Faithfulness"), judged=True,
               description="share of the answer's claims the contexts support"),
    MetricSpec("response_relevancy", ("user_input", "response"), _relevancy, judged=True,
               description="questions generated from the answer vs the question (embeddings)"),
    MetricSpec("llm_context_precision_with_reference", ("user_input", "retrieved_contexts", "reference"),
               _metric("LLMContextPrecisionWithReference"), judged=True,
               description="judged usefulness of each context, rank-weighted"),
    MetricSpec("llm_context_recall", ("user_input", "retrieved_contexts", "reference"),
               _metric("LLMContextRecall"), judged=True,
               description="share of the reference's claims attributable to the contexts"),
    MetricSpec("factual_correctness", ("response", "reference"), _metric("FactualCorrectness"), judged=True,
               description="claim-level F1 of answer vs reference"),
]
