"""How often ``rag-lab compare`` marks a difference "significant": family-wise error on null pairs of
runs and power on pairs where run B is truly better on one metric — through the code the CLI runs
(:func:`rag_lab.evaluate.compare.differences.paired_rows`: the policy's decision test, Holm over
every mode × metric printed).

A simulated pair of runs holds ``modes`` × ``metrics`` per-question scores (default 2 × 12: the
offline metrics of an unjudged ``eval`` of two modes, every row in one family). Scores follow
``benchmarks/grid_significance.py``: ``0.5 + σ·(√ρ·u_q + √(1−ρ)·e_rq)``, σ = 0.23, a question
effect u_q shared by both runs (correlation ρ), metrics drawn independently (the worst case for a
correction over all of them).

- null, dense: A and B each their own noise, equal means, metrics independent (the worst case for Holm:
  its bound 1 − (1 − 0.05/24)^24 ≈ 0.049 is nearly reached, so a measured rate scatters around 0.05);
- null, correlated: the same with the metrics' noise correlated 0.25 (the median |correlation| of the
  per-question differences between metrics in two real runs of texas_childcare was 0.09–0.22);
- null, sparse: B equals A except on ~10 % of the questions, redrawn (many exact ties, as a one-lever
  change gives);
- null, skewed: B moves 10 % of the questions rank 1 → 2 (−0.369) and 3.69 % miss → rank 1 (+1):
  mean 0, neither symmetric nor exchangeable;
- null, ranks: nDCG of a rank drawn per question from its own distribution; B redraws 15 %;
- null, identical: ``compare RUN RUN``;
- power: B better by Δ on every question of one metric in one mode (n 240, Δ 0.06, ρ 0.5), with
  the full 24-row family and with ``--metrics`` narrowed to that metric (2 rows).

Reported: ``fwer`` (share of seeds with ≥ 1 significant row) and ``power`` (share of seeds marking
the better row).

    python benchmarks/compare_significance.py               # 200 seeds per setting
    python benchmarks/compare_significance.py --quick       # 40 seeds
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.grid_significance import RANK_REDRAW, SIGMA, SKEW_GAIN, SKEW_LOSS, SPARSE_SHARE  # noqa: E402
from rag_lab.evaluate.compare.differences import paired_rows  # noqa: E402
from rag_lab.evaluate.compare.pairing import Pairing  # noqa: E402

MODES = ("bm25", "hybrid")
METRICS = ("ndcg@10", "mrr@10", "id_context_precision", "id_context_recall", "rouge_l", "string_similarity",
           "semantic_similarity", "key_fact_recall", "key_fact_precision", "citation_precision",
           "context_key_fact_coverage", "evidence_key_fact_coverage")


def _runs(a: np.ndarray, b: np.ndarray, metrics: tuple[str, ...]):
    """Two runs' records from (modes, metrics, questions) score arrays."""
    qids = [f"q{i}" for i in range(a.shape[-1])]

    def run(x):
        return SimpleNamespace(records={mode: [{"id": q, "scores": {m: float(x[i, j, k]) for j, m in enumerate(metrics)}}
                                               for k, q in enumerate(qids)] for i, mode in enumerate(MODES)})

    return run(a), run(b), Pairing(MODES, tuple(qids), 0, 0)


METRIC_CORRELATION = 0.25


def draw(shape: str, n: int, rho: float, metrics: tuple[str, ...], rng, effect: float = 0.0):
    size = (len(MODES), len(metrics), n)
    question = np.sqrt(rho) * rng.standard_normal(size)
    shared = METRIC_CORRELATION if shape == "correlated" else 0.0

    def noise():  # a run's own noise; with ``shared`` a part common to every metric of a question
        common = rng.standard_normal((len(MODES), 1, n))
        return np.sqrt(1 - rho) * (np.sqrt(shared) * common + np.sqrt(1 - shared) * rng.standard_normal(size))

    a = 0.5 + SIGMA * (question + noise())
    if shape in ("dense", "correlated"):
        b = 0.5 + SIGMA * (question + noise())
    elif shape == "sparse":
        redrawn = 0.5 + SIGMA * (question + np.sqrt(1 - rho) * rng.standard_normal(size))
        b = np.where(rng.random(size) < SPARSE_SHARE, redrawn, a)
    elif shape == "skewed":
        u = rng.random(size)
        b = a + np.where(u < SKEW_LOSS, -0.369, np.where(u < SKEW_LOSS + SKEW_GAIN, 1.0, 0.0))
    elif shape == "ranks":
        easy = np.clip(rng.beta(2.0, 1.5, size=size), 0.05, 0.999)

        def ndcg():
            ranks = rng.geometric(easy)
            return np.where(ranks <= 10, 1.0 / np.log2(1.0 + ranks), 0.0)
        a = ndcg()
        b = np.where(rng.random(size) < RANK_REDRAW, ndcg(), a)
    elif shape == "identical":
        b = a.copy()
    else:
        raise ValueError(shape)
    b[-1, 0] += effect  # the last mode's first metric (hybrid ndcg@10) better by Δ on every question
    return _runs(a, b, metrics)


def rates(shape: str, seeds: int, n: int, rho: float, metrics: tuple[str, ...], effect: float = 0.0) -> dict:
    marked = hit = 0
    for seed in range(seeds):
        run_a, run_b, pairing = draw(shape, n, rho, metrics, np.random.default_rng(seed), effect)
        table = paired_rows(run_a, run_b, pairing, metrics, ci=False)
        target = (table["mode"] == MODES[-1]) & (table["metric"] == metrics[0])
        marked += bool(table.loc[~target if effect else table.index == table.index, "significant"].any())
        hit += bool(table.loc[target, "significant"].any())
    out = {"shape": shape, "seeds": seeds, "n": n, "rho": rho, "family": len(MODES) * len(metrics)}
    return {**out, "power": hit / seeds, "delta": effect} if effect else {**out, "fwer": marked / seeds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="40 seeds per setting")
    parser.add_argument("--null-seeds", type=int, default=None, help="seeds of each null setting (default --seeds)")
    parser.add_argument("--only", default=None, help="comma-separated settings: dense, correlated, sparse, skewed, "
                                                     "ranks, identical, power (default all)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    seeds = 40 if args.quick else args.seeds
    started = time.perf_counter()
    only = set(args.only.split(",")) if args.only else None
    results: dict = {"null": [], "power": [], "sigma": SIGMA, "alpha": 0.05}
    for shape, n in (("dense", 150), ("correlated", 150), ("sparse", 150), ("skewed", 240), ("ranks", 150),
                     ("identical", 44)):
        if only and shape not in only:
            continue
        row = rates(shape, args.null_seeds or seeds, n, 0.8, METRICS)
        results["null"].append(row)
        se = (row["fwer"] * (1 - row["fwer"]) / row["seeds"]) ** 0.5
        print(f"null {shape:10} n {n}, {row['family']} rows, {row['seeds']} seeds: fwer {row['fwer']:.3f} "
              f"(± {1.96 * se:.3f})", flush=True)
    for metrics in (METRICS, METRICS[:1]) if not only or "power" in only else ():
        row = rates("dense", seeds, 240, 0.5, metrics, effect=0.06)
        results["power"].append(row)
        print(f"power n 240, Δ 0.06, ρ 0.5, {row['family']} rows: {row['power']:.3f}", flush=True)
    results["seconds"] = round(time.perf_counter() - started, 1)
    null_ok = all(r["fwer"] <= 0.05 for r in results["null"])
    power = results["power"][0]["power"] if results["power"] else float("nan")
    print(f"goal: fwer ≤ 0.05 in every null setting run: {null_ok}; power at n 240, Δ 0.06 with the full "
          f"{len(MODES) * len(METRICS)}-row family: {power:.3f} (≥ 0.80: {power >= 0.8}); {results['seconds']} s")
    if args.json:  # every setting's rates, for docs/compare.md
        args.json.write_text(json.dumps(results, indent=2))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
