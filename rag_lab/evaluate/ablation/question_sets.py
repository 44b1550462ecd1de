"""Two question sets, one corpus: do they rank the retrieval configurations alike?

Every configuration of a grid (and the single-leg modes dense and bm25) is scored per question by the
selection metric of ``tune`` (chunk_hit@5 for Q&A folders, nDCG@10 for BEIR), on each set's own
questions, from each question's legs retrieved once (:func:`~rag_lab.evaluate.ablation.legs.retrieve_legs`,
cached in ``run_dir``). The rankings are compared by Kendall τ_b with a bootstrap interval, beside the
first set's split-half τ_b at the second set's size (:mod:`rag_lab.evaluate.statistics.rank_agreement`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.ablation.grid import GridResult, GridSpec, compute_grid
from rag_lab.evaluate.ablation.legs import retrieve_legs
from rag_lab.evaluate.statistics.rank_agreement import agreement, split_half
from rag_lab.evaluate.tune.scores import default_metric, selection_scores

SINGLE_LEGS = {"dense": "dense", "bm25": "bm25"}  # the modes that are one leg of the fused ones


@dataclass
class SetComparison:
    dataset: str
    metric: str
    names: tuple[str, str]  # the two sets' labels, e.g. ("human", "synthetic")
    n: tuple[int, int]
    means: pd.DataFrame  # config, mode, is_mode, and one mean column per set
    agreement: dict[str, dict] = field(default_factory=dict)  # "modes" / "grid" → τ_b, CI, split-half ceiling

    def summary(self) -> str:
        a, b = self.names
        lines = [f"{self.dataset}: {self.metric}, {self.n[0]} {a} vs {self.n[1]} {b} questions"]
        for label, entry in self.agreement.items():
            x, ceiling = entry["agreement"], entry["split_half"]
            lines.append(f"  {label} ({entry['configs']} configurations): τ_b({b}, {a}) = {x['tau_b']:.3f} "
                         f"[{x['ci_low']:.3f}, {x['ci_high']:.3f}]; {a} split-half at n = {ceiling['n_a']}: "
                         f"{ceiling['tau_b']:.3f} [{ceiling['ci_low']:.3f}, {ceiling['ci_high']:.3f}]")
        return "\n".join(lines)


def per_config_scores(dataset: Dataset, index, spec: GridSpec, metric: str,
                      run_dir: Path, progress: bool = False) -> dict[str, dict[str, float]]:
    """``scores[config id or single-leg mode][qid]`` over ``dataset``'s judged questions."""
    queries, qrels = dataset.judged_queries()
    questions, _ = retrieve_legs(index, queries, run_dir, spec.modes, spec.depth, progress=progress,
                                 prefetches=spec.prefetch)
    scores = selection_scores(metric, compute_grid(questions, spec), questions, qrels)
    legs = GridResult(spec, [], {m: {} for m in SINGLE_LEGS}, {m: {} for m in SINGLE_LEGS})
    for question in questions:
        for mode, leg in SINGLE_LEGS.items():
            ranked = question.legs[leg][:10]
            legs.chunks[mode][question.qid] = tuple(chunk for chunk, _, _ in ranked)
            legs.docs[mode][question.qid] = tuple(dict.fromkeys(doc for _, doc, _ in ranked))
    scores.update(selection_scores(metric, legs, questions, qrels))
    return scores


def _matrix(scores: dict[str, dict[str, float]], configs: list[str]) -> np.ndarray:
    qids = sorted(scores[configs[0]])
    return np.array([[scores[c][q] for q in qids] for c in configs], dtype=float)


def compare_question_sets(first: Dataset, second: Dataset, settings: Settings, spec: GridSpec, run_dir: Path,
                          names: tuple[str, str] = ("human", "synthetic"), n_resamples: int = 1000,
                          progress: bool = False) -> SetComparison:
    """The four modes' and the grid's rankings under ``first``'s and ``second``'s questions (same corpus)."""
    from rag_lab.index import CorpusIndex

    index = CorpusIndex.open(first, settings)
    metric = default_metric(first)
    a = per_config_scores(first, index, spec, metric, Path(run_dir) / f"legs-{names[0]}", progress)
    b = per_config_scores(second, index, spec, metric, Path(run_dir) / f"legs-{names[1]}", progress)
    top = 10 if 10 in spec.top_k else max(spec.top_k)
    modes = {**{m: m for m in SINGLE_LEGS}, **{m: spec.baseline(m, top).id for m in spec.modes}}
    grid_ids = [c.id for c in spec.configs()]
    result = SetComparison(first.name, metric, names, (len(a["dense"]), len(b["dense"])), pd.DataFrame())
    for label, configs in (("modes", list(modes.values())), ("grid", grid_ids)):
        A, B = _matrix(a, configs), _matrix(b, configs)
        result.agreement[label] = {"configs": len(configs), "agreement": agreement(B, A, n_resamples).as_dict(),
                                   "split_half": split_half(A, B.shape[1]).as_dict()}
    mode_of = {cid: mode for mode, cid in modes.items()}
    rows = [{"config": cid, "mode": mode_of.get(cid, cid.split("|")[0]), "is_mode": cid in mode_of,
             names[0]: float(np.mean(list(a[cid].values()))), names[1]: float(np.mean(list(b[cid].values())))}
            for cid in dict.fromkeys([*modes.values(), *grid_ids])]
    result.means = pd.DataFrame(rows)
    return result
