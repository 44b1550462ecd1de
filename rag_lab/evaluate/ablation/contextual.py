"""The contextual axis of ``rag-lab ablate``: the same grid on each contextual index variant
(none | annotations | llm | both), and each variant against the first one (usually ``none``) at
the grid's baseline configurations, with bootstrap CIs. What can be marked: the headline metric at
the largest top-k, tested by the lab's decision test (:mod:`rag_lab.evaluate.statistics.policy`) and
corrected in ONE family with every variant's own marked set (:func:`joint_correction`), so the whole
command's output holds one family-wise error rate; paired Student's t and Wilcoxon, Holm within each
(configuration, metric), stay beside it as the exploratory view.

Each variant's run is a normal ablation run folder (``<out>/<variant>``, resumable); the axis
table is ``<out>/contextual.csv``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.ablation.runner import AblationResult, baseline_configs, run_ablation
from rag_lab.evaluate.ablation.grid import GridSpec
from rag_lab.evaluate.statistics.significance import DEFAULT_ALPHA
from rag_lab.ingest.contextual import VARIANTS, check_variant

CONTEXTUAL_FILE = "contextual.csv"


@dataclass
class ContextualAblation:
    out_dir: Path
    runs: dict[str, AblationResult]
    axis: "pandas.DataFrame"  # noqa: F821  variant × baseline configuration × metric
    family: dict  # the one family of everything the command can mark (joint_correction)


def parse_variants(text: str) -> tuple[str, ...]:
    variants = tuple(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))
    if not variants:
        raise ValueError(f"--contextual is empty: use some of {', '.join(VARIANTS)}")
    for variant in variants:
        check_variant(variant)
    return variants


def contextual_axis(runs: dict[str, AblationResult], spec: GridSpec, seed: int = 42,
                    alpha: float = DEFAULT_ALPHA) -> "pandas.DataFrame":  # noqa: F821
    """Every variant against the first, at each baseline configuration and metric. Exploratory
    families per (configuration, metric): "does the contextual variant matter here?"; the marked
    rows (headline metric, largest top-k) get the policy's decision test and Holm among themselves
    here — :func:`joint_correction` then pools them with the variants' marked sets."""
    import pandas as pd

    from rag_lab.evaluate.ablation.significance import (correct_over_rows, correct_within_families, headline_metric,
                                                        pair_arrays, paired_comparison)
    from rag_lab.evaluate.statistics.significance import bootstrap_ci

    names = list(runs)
    base = names[0]
    scores: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for name, result in runs.items():
        frame = result.per_query
        for (config, metric), group in frame.groupby(["config", "metric"], sort=False):
            scores.setdefault(config, {}).setdefault(name, {})[metric] = dict(zip(group["qid"].astype(str),
                                                                                  group["score"].astype(float)))
    rows = []
    memo: dict = {}
    for config in (c.id for c in baseline_configs(spec)):
        systems = scores.get(config, {})
        if base not in systems:
            continue
        for name in names:
            for metric, per_q in systems.get(name, {}).items():
                ci = bootstrap_ci(list(per_q.values()), seed=seed)
                row = {"contextual": name, "baseline": base, "config": config, "metric": metric, "mean": ci["mean"],
                       "ci_low": ci["ci_low"], "ci_high": ci["ci_high"], "n": ci["n"], "family": None,
                       "delta": float("nan"), "p_student": float("nan"), "p_wilcoxon": float("nan")}
                if name != base and systems[base].get(metric):
                    row.update({"family": f"contextual | {config} | {metric}",
                                **paired_comparison(systems, name, base, metric, memo)})
                rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table = correct_within_families(table, alpha)
    # what may be called significant: the headline metric at the deepest cut-off, Holm over those rows
    deepest = {c.id for c in baseline_configs(spec) if c.top_k == max(spec.top_k)}
    marked = (table["config"].isin(deepest) & (table["metric"] == headline_metric(table["metric"]))
              & table["p_student"].notna())
    return correct_over_rows(table, marked, lambda row: pair_arrays(
        scores[table.at[row, "config"]], table.at[row, "contextual"], base, table.at[row, "metric"]), alpha, seed)


def run_contextual_ablation(dataset: Dataset, settings: Settings, spec: GridSpec, out_dir: Path | str,
                            variants: Sequence[str], *, limit: int | None = None, progress: bool = True,
                            seed: int = 42, yes: bool = False, split: str = "all",
                            echo=print, force: bool = False) -> ContextualAblation:
    """Build (or reuse) each variant's index, run the grid on it, then compare the variants."""
    from rag_lab.index import build_index

    out_dir = Path(out_dir)
    runs: dict[str, AblationResult] = {}
    for variant in variants:
        build_index(dataset, settings, progress=progress, contextual=variant, yes=yes, echo=echo)
        runs[variant] = run_ablation(dataset, settings, spec, out_dir / variant, limit=limit, progress=progress,
                                     seed=seed, contextual=variant, split=split, force=force)
    axis = contextual_axis(runs, spec, seed)
    family = joint_correction(runs, axis)
    out_dir.mkdir(parents=True, exist_ok=True)
    axis.to_csv(out_dir / CONTEXTUAL_FILE, index=False)
    return ContextualAblation(out_dir, runs, axis, family)


def command_family(grids: dict[str, "pandas.DataFrame"], axis, alpha: float = DEFAULT_ALPHA) -> dict:  # noqa: F821
    """Holm over every variant grid's marked set and the axis's together (tables updated in place:
    ``p_adjusted``, ``significant``); the family's size, members and the sentence the CLI prints."""
    from rag_lab.evaluate.statistics import policy

    tables = list(grids.values()) + ([axis] if not axis.empty else [])
    size = policy.correct_jointly(tables, alpha)
    per_variant = {name: int(table["marked_set"].sum()) for name, table in grids.items()}
    axis_size = int(axis["marked_set"].sum()) if "marked_set" in axis else 0
    what = (" + ".join(f"{n} in the {name} grid" for name, n in per_variant.items())
            + f" + {axis_size} on the contextual axis; headline metric at the largest top-k")
    return {"size": size, "alpha": alpha, "members": {**per_variant, "contextual axis": axis_size},
            "text": policy.family_text(size, what, alpha)}


def joint_correction(runs: dict[str, AblationResult], axis, alpha: float = DEFAULT_ALPHA) -> dict:
    """One family over everything the command can mark: each variant's marked set and the
    contextual axis's, Holm over them together (:func:`~rag_lab.evaluate.statistics.policy.correct_jointly`).
    Each variant's results.csv and manifest are rewritten with the joint marks; returns the
    family's description, also stored in every manifest."""
    import json

    from rag_lab.evaluate.ablation.runner import MANIFEST_FILE, RESULTS_FILE
    from rag_lab.evaluate.ablation.significance import significance_manifest

    family = command_family({name: run.results for name, run in runs.items()}, axis, alpha)
    for run in runs.values():
        run.manifest["significance"] = {**significance_manifest(run.results, alpha), "command_family": family}
        run.results.to_csv(run.run_dir / RESULTS_FILE, index=False)
        (run.run_dir / MANIFEST_FILE).write_text(json.dumps(run.manifest, indent=2, ensure_ascii=False))
    return family
