"""Do the calibrated intervals cover? Monte Carlo coverage of the 95 % PPI++ intervals (the code
``rag_lab.api.calibrate`` and ``rag-lab label`` use) and their width against the labels alone.

    python benchmarks/ppi_validity.py                                   # simulated runs only
    python benchmarks/ppi_validity.py --natural-judgments runs/judge_natural/all/judgments.jsonl
    python benchmarks/ppi_validity.py --skip-simulated --natural-design rules \
        --natural-judgments runs/judge_rules/all/judgments.jsonl   # judge_natural.py --designs rules

**Simulated**: a run of N answers (N = 10 × the budget, at least 1,000: a tenth or fewer labelled),
each label 1 with the prevalence, the judge's score Φ(d·y + ε − d/2) with ε ~ N(0, 1), so its ROC
AUC is Φ(d/√2): anti-correlated (AUC 0.10), useless (0.50), the offline judge's level (0.76), good
(0.90), near perfect (0.99). Labels drawn at random (``calibrate``'s simple random sample) or by
``--budget``'s stratified draw over judge-score bands (the stratified estimator); truth is the
prevalence. **Natural set**: the 250 labelled answers of texas_childcare_full/natural_answers and the
offline judge's faithfulness scores of them (``benchmarks/judge_natural.py --designs judge``); budgets
of 40/80/120 drawn from the 250, truth the full set's share of faithful answers.

Printed per setting: coverage of the PPI++ interval and of the labels-only one, the mean width ratio
(PPI++ / labels only), the share of draws flagged "too few labels" and the coverage of the rest.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_lab.evaluate.statistics.calibrate import MIN_CLASS, MIN_LABELS  # noqa: E402
from rag_lab.evaluate.statistics.ppi import (PSEUDO_LABELS, STRATUM_PSEUDO_LABELS, allocate_budget,  # noqa: E402
                                             classical_mean_many, interval, merge_sparse_strata, ppi_mean_many,
                                             score_bands, stratified_mean_many)

JUDGES = {"anti-correlated": -1.8125, "useless": 0.0, "offline-like": 1.0, "good": 1.8125, "near perfect": 3.29}
BUDGETS = (20, 40, 80, 150, 300)
PREVALENCES = (0.1, 0.3, 0.5, 0.7, 0.9)
NATURAL = Path(__file__).resolve().parents[1] / "datasets/texas_childcare_full/natural_answers"


def judge_scores(rng, y: np.ndarray, d: float) -> np.ndarray:
    return norm.cdf(d * y + rng.standard_normal(y.shape) - d / 2)


def random_draw(rng, shape: tuple[int, int], budget: int) -> np.ndarray:
    keys = rng.random(shape)
    chosen = np.argpartition(keys, budget - 1, axis=1)[:, :budget]
    labelled = np.zeros(shape, bool)
    np.put_along_axis(labelled, chosen, True, axis=1)
    return labelled


def stratified_draw(rng, bands: np.ndarray, budget: int) -> np.ndarray:
    """``--budget``'s draw per run: allocate_budget over the score bands, then at random within each."""
    keys = rng.random(bands.shape)
    labelled = np.zeros(bands.shape, bool)
    counts = np.stack([(bands == b).sum(axis=1) for b in range(3)], axis=1)
    allocation = np.array([allocate_budget(row, budget) for row in counts])
    for b in range(3):
        inside = np.where(bands == b, keys, np.inf)
        ordered = np.sort(inside, axis=1)
        take = allocation[:, b]
        threshold = np.where(take > 0, ordered[np.arange(len(bands)), np.maximum(take - 1, 0)], -np.inf)
        labelled |= inside <= threshold[:, None]
    return labelled


def flagged(y: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """``calibrate``'s "too few labels", per run."""
    n = labelled.sum(axis=1)
    ones = np.where(labelled, y, 0).sum(axis=1)
    return (n < MIN_LABELS) | (np.minimum(ones, n - ones) < MIN_CLASS)


PLAIN = False  # --plain: the normal intervals without pseudo-labels (ppi_py's), to see what plus four buys


def estimate(f, y, labelled, stratified: bool):
    """(PPI++ low, high, labels-only low, high) per run, as calibrate computes them."""
    if not stratified:
        pseudo = 0 if PLAIN else PSEUDO_LABELS
        ppi = ppi_mean_many(f, y, labelled, pseudo=pseudo)[:2]
        only = classical_mean_many(y, labelled, pseudo=pseudo)
    else:
        bands = score_bands(f)
        ppi = stratified_mean_many(f, y, labelled, bands, pseudo=STRATUM_PSEUDO_LABELS)
        only = stratified_mean_many(f, y, labelled, bands, labels_only=True, pseudo=STRATUM_PSEUDO_LABELS)
        for row in np.flatnonzero(np.isnan(ppi[1]) | np.isnan(only[1])):  # a thin band: merged, as calibrate does
            merged = merge_sparse_strata(bands[row], labelled[row])
            for target, labels_only in ((ppi, False), (only, True)):
                e, s = stratified_mean_many(f[row], y[row], labelled[row], merged, labels_only=labels_only,
                                            pseudo=STRATUM_PSEUDO_LABELS)
                target[0][row], target[1][row] = e[0], s[0]
    return (*interval(*ppi), *interval(*only))


def summarise(truth, f, y, labelled, stratified: bool) -> dict:
    low, high, only_low, only_high = estimate(f, y, labelled, stratified)
    covered = (low <= truth) & (truth <= high)
    flags = flagged(y, labelled)
    return {"coverage": covered.mean(), "labels_only_coverage": ((only_low <= truth) & (truth <= only_high)).mean(),
            "width_ratio": np.nanmean(high - low) / np.nanmean(only_high - only_low),
            "flagged": flags.mean(), "coverage_unflagged": covered[~flags].mean() if (~flags).any() else float("nan")}


def simulated(runs: int, seed: int, stratified: bool, block: int = 500) -> list[dict]:
    rows = []
    rng = np.random.default_rng(seed)
    for judge, d in JUDGES.items():
        for prevalence in PREVALENCES:
            for budget in BUDGETS:
                size = max(1000, 10 * budget)
                parts = []
                for start in range(0, runs, block):
                    shape = (min(block, runs - start), size)
                    y = (rng.random(shape) < prevalence).astype(float)
                    f = judge_scores(rng, y, d)
                    labelled = stratified_draw(rng, score_bands(f), budget) if stratified else random_draw(rng, shape, budget)
                    parts.append((shape[0], summarise(prevalence, f, y, labelled, stratified)))
                total = sum(n for n, _ in parts)
                merged = {k: sum(n * p[k] for n, p in parts) / total for k in parts[0][1]}
                rows.append({"judge": judge, "auc": norm.cdf(d / np.sqrt(2)), "prevalence": prevalence,
                             "budget": budget, "answers": size, **merged})
    return rows


def natural(judgments: Path, runs: int, seed: int, stratified: bool, design: str = "judge") -> list[dict]:
    labels = {r["id"]: r["faithful"] for r in map(json.loads, (NATURAL / "labels.jsonl").open(encoding="utf-8"))}
    scores = {}
    for line in judgments.open(encoding="utf-8"):
        r = json.loads(line)
        if r.get("metric") == "faithfulness" and r.get("design") == design and r.get("score") is not None:
            scores[r["id"]] = float(r["score"])
    ids = sorted(set(scores) & {i for i, v in labels.items() if v in (0, 1)})
    f0 = np.array([scores[i] for i in ids])
    y0 = np.array([float(labels[i]) for i in ids])
    from rag_lab.evaluate.statistics.agreement import roc_auc

    rng = np.random.default_rng(seed)
    rows = []
    for budget in (40, 80, 120):
        f, y = np.tile(f0, (runs, 1)), np.tile(y0, (runs, 1))
        labelled = stratified_draw(rng, score_bands(f), budget) if stratified else random_draw(rng, f.shape, budget)
        rows.append({"judge": f"natural set, {design} design, faithfulness", "auc": roc_auc(f0, y0), "prevalence": y0.mean(),
                     "budget": budget, "answers": len(ids), **summarise(y0.mean(), f, y, labelled, stratified)})
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| judge (AUC) | prevalence | labels / answers | coverage | labels-only coverage | width ratio | "
             "flagged | coverage unflagged |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['judge']} ({r['auc']:.2f}) | {r['prevalence']:.2f} | {r['budget']} / {r['answers']} | "
                     f"{r['coverage']:.3f} | {r['labels_only_coverage']:.3f} | {r['width_ratio']:.2f} | "
                     f"{r['flagged']:.2f} | {r['coverage_unflagged']:.3f} |")
    return "\n".join(lines)


def verdicts(rows: list[dict]) -> str:
    """The bars, checked over the rows: coverage ≥ 0.94 with ≥ 40 labels (else the shortfall must sit in
    flagged draws: the unflagged ones, when there are 10 % or more of them, cover ≥ 0.94), and the widths."""
    counted = [r for r in rows if r["budget"] >= 40]
    worst = min(counted, key=lambda r: r["coverage"])
    measurable = [r for r in counted if r["flagged"] <= 0.9]
    short = [r for r in counted if r["coverage"] < 0.94
             and not (r["flagged"] > 0.9 or r["coverage_unflagged"] >= 0.94)]
    out = [f"lowest coverage, budget ≥ 40: {worst['coverage']:.3f} ({worst['judge']}, prevalence "
           f"{worst['prevalence']:.2f}, {worst['budget']} labels, {worst['flagged']:.0%} of draws flagged)"]
    if measurable:
        low = min(measurable, key=lambda r: r["coverage_unflagged"])
        out.append(f"lowest coverage of the unflagged draws (settings with ≥ 10 % unflagged), budget ≥ 40: "
                   f"{low['coverage_unflagged']:.3f} ({low['judge']}, prevalence {low['prevalence']:.2f}, {low['budget']} labels)")
    out.append(f"settings with budget ≥ 40 below 0.94 and not explained by flagged draws: {len(short)} of {len(counted)}"
               + "".join(f"\n  {r['judge']}, prevalence {r['prevalence']:.2f}, {r['budget']} labels: coverage "
                         f"{r['coverage']:.3f}, unflagged {r['coverage_unflagged']:.3f}" for r in short))
    weak = [r for r in rows if r["judge"] in ("anti-correlated", "useless")]
    if weak:
        out.append(f"largest width ratio, useless or anti-correlated judge: {max(r['width_ratio'] for r in weak):.3f}")
    for name, chosen in (("0.3–0.7", (0.3, 0.5, 0.7)), ("0.1 and 0.9", (0.1, 0.9))):
        good = [r for r in rows if r["judge"] == "good" and r["budget"] * 10 <= r["answers"] and r["prevalence"] in chosen]
        if good:
            out.append(f"largest width ratio, AUC 0.90 judge, a tenth or fewer labelled, prevalence {name}: "
                       f"{max(r['width_ratio'] for r in good):.3f}")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated runs (draws) per setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--natural-judgments", type=Path, default=None,
                        help="judgments.jsonl of benchmarks/judge_natural.py --designs judge (faithfulness)")
    parser.add_argument("--natural-design", default="judge",
                        help="the judge_natural.py design whose scores to use (judge: rules and model; rules: rules alone)")
    parser.add_argument("--skip-simulated", action="store_true")
    parser.add_argument("--design", choices=("simple", "budget", "both"), default="both",
                        help="a simple random sample (calibrate), the --budget draw, or both")
    parser.add_argument("--plain", action="store_true", help="simple random sample: intervals without pseudo-labels")
    args = parser.parse_args()
    global PLAIN
    PLAIN = args.plain
    started = time.perf_counter()
    designs = ((False, "simple random sample, PPI++ (calibrate)" + (", plain normal interval" if args.plain else "")),
               (True, "stratified by judge-score band (--budget), stratified PPI++"))
    for stratified, name in designs:
        if args.design != "both" and stratified != (args.design == "budget"):
            continue
        rows = [] if args.skip_simulated else simulated(args.runs, args.seed, stratified)
        if args.natural_judgments:
            rows += natural(args.natural_judgments, args.runs, args.seed, stratified, args.natural_design)
        print(f"\n## {name}: {args.runs} runs per setting\n")
        print(table(rows))
        print()
        print(verdicts(rows))
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
