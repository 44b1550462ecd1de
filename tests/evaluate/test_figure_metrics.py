"""The figure metrics as the scorer runs them: applicable to answers stating a figure, 1 or 0."""

from __future__ import annotations

import asyncio

from ragas.dataset_schema import SingleTurnSample

from rag_lab.evaluate.metrics import all_specs, offline_metric_names

QUESTION = "What is the maximum bi-weekly income for a family of 5 in BCY 2026?"
CONTEXT = ("Income Eligibility Limits\nIncome Eligibility Limits | Family Size 5 | Annual: $106,768 | Monthly: $8,897 | "
           "Weekly: $2,053 | Bi-Monthly: $4,449 | Bi-Weekly: $4,106")


def _scores(answer: str) -> dict:
    specs = {s.name: s for s in all_specs() if s.name in ("figures_in_context", "figures_in_place")}
    sample = SingleTurnSample(user_input=QUESTION, response=answer, retrieved_contexts=[CONTEXT])
    return {name: (asyncio.run(spec.build(None).single_turn_ascore(sample)) if spec.applies(sample) else None)
            for name, spec in specs.items()}


def test_the_figure_metrics_score_right_misplaced_and_invented_figures():
    assert {"figures_in_context", "figures_in_place"} <= set(offline_metric_names())
    assert _scores("The limit is $4,106.") == {"figures_in_context": 1.0, "figures_in_place": 1.0}
    assert _scores("The limit is $4,449.") == {"figures_in_context": 1.0, "figures_in_place": 0.0}
    assert _scores("The limit is $4,116.") == {"figures_in_context": 0.0, "figures_in_place": 1.0}
    # a quote-only answer states no figure: not applicable
    assert _scores(f"“{CONTEXT.splitlines()[1]}” [Doc 1: f.pdf, Page 1, line 2]") == {
        "figures_in_context": None, "figures_in_place": None}
