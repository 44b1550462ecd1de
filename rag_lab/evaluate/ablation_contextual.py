"""The contextual axis of ``rag-lab ablate``: the same grid on each contextual index variant
(none | annotations | llm | both), and each variant against the first one (usually ``none``) at
the grid's baseline configurations — paired tests (Student's t and Fisher), Holm-corrected over
the whole family, and bootstrap CIs.

Each variant's run is a normal ablation run folder (``<out>/<variant>``, resumable); the axis
table is ``<out>/contextual.csv``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.ablation import AblationResult, baseline_configs, run_ablation
from rag_lab.evaluate.ablation_grid import GridSpec
from rag_lab.ingest.contextual import VARIANTS, check_variant

CONTEXTUAL_FILE = "contextual.csv"


@dataclass
class ContextualAblation:
    out_dir: Path
    runs: dict[str, AblationResult]
    axis: "pandas.DataFrame"  # noqa: F821  variant × baseline configuration × metric


def parse_variants(text: str) -> tuple[str, ...]:
    variants = tuple(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))
    if not variants:
        raise ValueError(f"--contextual is empty: use some of {', '.join(VARIANTS)}")
    for variant in variants:
        check_variant(variant)
    return variants


def contextual_axis(runs: dict[str, AblationResult], spec: GridSpec, n_permutations: int = 1000,
                    seed: int = 42) -> "pandas.DataFrame":  # noqa: F821
    """Every variant against the first, at each baseline configuration and metric."""
    import pandas as pd

    from rag_lab.evaluate.stats import bootstrap_ci, compare_to_baseline, holm

    names = list(runs)
    base = names[0]
    scores: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for name, result in runs.items():
        frame = result.per_query
        for (config, metric), group in frame.groupby(["config", "metric"], sort=False):
            scores.setdefault(config, {}).setdefault(name, {})[metric] = dict(zip(group["qid"].astype(str),
                                                                                  group["score"].astype(float)))
    rows, tests = [], []
    for config in (c.id for c in baseline_configs(spec)):
        systems = scores.get(config, {})
        if base not in systems:
            continue
        for name in names:
            for metric, per_q in systems.get(name, {}).items():
                ci = bootstrap_ci(list(per_q.values()), seed=seed)
                rows.append({"contextual": name, "config": config, "metric": metric, "mean": ci["mean"],
                             "ci_low": ci["ci_low"], "ci_high": ci["ci_high"], "n": ci["n"]})
        if len(systems) > 1:
            tests.append(compare_to_baseline(systems, base, n_permutations=n_permutations, seed=seed)
                         .assign(config=config))
    table = pd.DataFrame(rows)
    if not tests or table.empty:
        return table.assign(baseline=base, delta=float("nan"), p_student_holm=float("nan"),
                            p_fisher_holm=float("nan"), significant=False)
    sig = pd.concat(tests, ignore_index=True)
    for test in sig["test"].unique():  # one Holm family per test over every (variant, config, metric)
        mask = sig["test"] == test
        sig.loc[mask, "p_holm"] = holm(sig.loc[mask, "p_value"].tolist())
    wide = sig.pivot_table(index=["system", "config", "metric"], columns="test", values=["p_holm", "delta"],
                           aggfunc="first")
    wide.columns = [f"{a}_{b}" for a, b in wide.columns]
    wide = wide.reset_index().rename(columns={"system": "contextual", "p_holm_student": "p_student_holm",
                                              "p_holm_fisher": "p_fisher_holm", "delta_fisher": "delta"})
    table = table.merge(wide[["contextual", "config", "metric", "delta", "p_student_holm", "p_fisher_holm"]],
                        on=["contextual", "config", "metric"], how="left")
    table.insert(1, "baseline", base)
    table["significant"] = (table["p_student_holm"] < 0.05) & (table["p_fisher_holm"] < 0.05)
    return table


def run_contextual_ablation(dataset: Dataset, settings: Settings, spec: GridSpec, out_dir: Path | str,
                            variants: Sequence[str], *, limit: int | None = None, progress: bool = True,
                            n_permutations: int = 1000, seed: int = 42, yes: bool = False,
                            echo=print) -> ContextualAblation:
    """Build (or reuse) each variant's index, run the grid on it, then compare the variants."""
    from rag_lab.index import build_index

    out_dir = Path(out_dir)
    runs: dict[str, AblationResult] = {}
    for variant in variants:
        build_index(dataset, settings, progress=progress, contextual=variant, yes=yes, echo=echo)
        runs[variant] = run_ablation(dataset, settings, spec, out_dir / variant, limit=limit, progress=progress,
                                     n_permutations=n_permutations, seed=seed, contextual=variant)
    axis = contextual_axis(runs, spec, n_permutations, seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    axis.to_csv(out_dir / CONTEXTUAL_FILE, index=False)
    return ContextualAblation(out_dir, runs, axis)
