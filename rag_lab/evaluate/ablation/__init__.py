"""``rag-lab ablate``: every fusion/hybrid configuration from cached candidate lists.

The stages, one module each: :mod:`.legs` (each question's candidate lists, retrieved once and
cached) → :mod:`.grid` (every configuration, vectorised RRF) → :mod:`.metrics` (ranx at each
configuration's top-k, RAGAS ID-based context metrics) → :mod:`.significance` (bootstrap CIs,
paired tests; FWER ≤ 0.05 over the marked set, per-family Holm exploratory) → :mod:`.spot_check`
(live retrievers vs the grid) → :mod:`.runner` (the run folder). :mod:`.answers` answers chosen configurations;
:mod:`.contextual` runs the grid on contextual index variants.
"""



def __getattr__(name):  # lazy: the grid kernel (grid, metrics) imports with numpy and ranx alone, not the runner
    if name in __all__:
        from rag_lab.evaluate.ablation import runner

        return getattr(runner, name)
    raise AttributeError(name)


__all__ = ["AblationResult", "baseline_configs", "load_ablation", "load_questions", "question_details",
           "run_ablation"]
