"""How often the ablation grid marks something "significant": size on null grids, power on grids with
one truly better configuration — through the code the CLI runs (``summarise`` on the default
224-configuration grid, 2 modes × 7 k × 4 prefetch × 4 top-k).

Per-query scores: ``0.5 + σ·(√ρ·u_q + √(1−ρ)·e_cq)``, a question effect ``u_q`` shared by every
configuration (correlation ρ between two configurations' scores) and independent noise. σ = 0.23 is
fitted so that the previous rule (Holm within each axis × mode × top-k × metric family) reproduces
the power measured for it (docs/CHANGELOG.md) (0.90 / 0.60 / 0.15 at n 240 Δ 0.06, n 240 Δ 0.04, n 100 Δ 0.04,
ρ 0.5; analytic 0.92 / 0.52 / 0.20 at σ = 0.23).

- null, dense: every configuration has its own noise; sparse: every configuration equals one shared
  ranking except on ~10 % of the questions, redrawn (many exact ties, as in real grids);
- null, skewed: the shape rank metrics give when a setting trades many small losses for a few large
  gains of the same mean — each configuration moves 10 % of the questions from rank 1 to 2
  (Δ −0.369) and 3.69 % from a miss to rank 1 (Δ +1) against its mode's baseline, so every
  difference has mean 0 but is neither symmetric nor exchangeable;
- null, discrete ranks: scores are nDCG values of a rank (1/log2(1 + rank), 0 beyond 10) drawn
  per question from a question-specific distribution; each configuration redraws 15 % of the ranks
  (exchangeable, discrete, mostly exact ties);
- null, contextual command: ``ablate --contextual none,annotations`` — two variant grids and the
  contextual axis, all marks in one family (the command's :func:`command_family`);
- 1 metric (``ndcg@top_k``) or 4 (independent: the worst case for anything corrected per metric);
- power: ``fusion|k=20|p=100|w=1:1|top=10`` (a k-family row at the headline cut-off) better by Δ on
  every question of the headline metric; one more setting puts it at top-5, outside the marked set.

Reported per setting: ``fwer`` (null: share of seeds with ≥ 1 significant row anywhere in what the
command prints), ``power`` (share of seeds marking the better configuration), ``false_rows`` (mean
significant rows that are not it), ``shown`` (share of seeds where the better configuration is at
least listed as "not controlled — confirm with tune") and the rates under the old per-family rule
(``old_*``) for comparison.

    python benchmarks/grid_significance.py --json out.json          # 200 seeds per setting
    python benchmarks/grid_significance.py --quick                  # 30 seeds, a few minutes
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_lab.evaluate.ablation.grid import GridSpec  # noqa: E402
from rag_lab.evaluate.ablation.contextual import command_family, contextual_axis  # noqa: E402
from rag_lab.evaluate.ablation.significance import summarise, uncontrolled_rows  # noqa: E402
from rag_lab.evaluate.statistics.significance import DEFAULT_ALPHA  # noqa: E402

SIGMA = 0.23
METRICS = ("ndcg@top_k", "recall@top_k", "precision@top_k", "mrr@top_k")
BETTER = "fusion|k=20|p=100|w=1:1|top=10"
BETTER_OUTSIDE = "fusion|k=20|p=100|w=1:1|top=5"
SPARSE_SHARE = 0.1
SKEW_LOSS, SKEW_GAIN = 0.10, 0.0369  # shares moved rank 1 → 2 (−0.369) and miss → rank 1 (+1): equal means
RANK_REDRAW = 0.15
VARIANTS = ("none", "annotations")


def _is_baseline(spec: GridSpec, config) -> bool:
    return config == spec.baseline(config.mode, config.top_k)


def skewed_scores(spec: GridSpec, n: int, rng) -> dict:
    """Baselines share one score vector; every other configuration = it + an equal-mean skewed change."""
    configs = spec.configs()
    base = 0.5 + SIGMA * rng.standard_normal(n)
    u = rng.random((len(configs), n))
    change = np.where(u < SKEW_LOSS, -0.369, np.where(u < SKEW_LOSS + SKEW_GAIN, 1.0, 0.0))
    qids = [f"q{i}" for i in range(n)]
    return {c.id: {METRICS[0]: dict(zip(qids, (base if _is_baseline(spec, c) else base + change[i]).tolist()))}
            for i, c in enumerate(configs)}


def rank_scores(spec: GridSpec, n: int, rng) -> dict:
    """nDCG of the first relevant document's rank, drawn per question from its own distribution."""
    configs = spec.configs()
    easy = rng.beta(2.0, 1.5, size=n)  # a question's chance of rank 1; failures fall geometrically
    def draw(size):
        ranks = rng.geometric(np.clip(easy, 0.05, 0.999), size=(size, n))  # 1, 2, …
        return np.where(ranks <= 10, 1.0 / np.log2(1.0 + ranks), 0.0)
    shared = draw(1)[0]
    scores = np.where(rng.random((len(configs), n)) < RANK_REDRAW, draw(len(configs)), shared)
    qids = [f"q{i}" for i in range(n)]
    return {c.id: {METRICS[0]: dict(zip(qids, scores[i].tolist()))} for i, c in enumerate(configs)}


def per_query_frame(per_query: dict, configs) -> "pandas.DataFrame":  # noqa: F821
    import pandas as pd

    rows = [(c.id, q, m, v) for c in configs for m, scores in per_query[c.id].items() for q, v in scores.items()]
    return pd.DataFrame(rows, columns=["config", "qid", "metric", "score"])


def contextual_command(spec: GridSpec, n: int, rho: float, rng) -> list:
    """What ``ablate --contextual none,annotations`` marks on a null: each variant's grid (own
    noise, a question effect shared by everything) and the contextual axis, one family."""
    from types import SimpleNamespace

    configs = spec.configs()
    question = np.sqrt(rho) * rng.standard_normal(n)
    qids = [f"q{i}" for i in range(n)]
    grids, runs = {}, {}
    for variant in VARIANTS:
        scores = 0.5 + SIGMA * (question + np.sqrt(1.0 - rho) * rng.standard_normal((len(configs), n)))
        per_query = {c.id: {METRICS[0]: dict(zip(qids, scores[i].tolist()))} for i, c in enumerate(configs)}
        grids[variant] = summarise(per_query, configs, spec, ci=False)
        runs[variant] = SimpleNamespace(per_query=per_query_frame(per_query, [c for c in configs
                                                                             if _is_baseline(spec, c)]))
    axis = contextual_axis(runs, spec)
    command_family(grids, axis)
    return [*grids.values(), axis]


def grid_scores(spec: GridSpec, n: int, rho: float, metrics: tuple[str, ...], rng, sparse: bool = False,
                effect: tuple[str, float] | None = None) -> dict:
    """``per_query[config][metric][qid]`` for every configuration of ``spec``."""
    configs = spec.configs()
    qids = [f"q{i}" for i in range(n)]
    per_query: dict = {c.id: {} for c in configs}
    for metric in metrics:
        question = np.sqrt(rho) * rng.standard_normal(n)
        noise = np.sqrt(1.0 - rho) * rng.standard_normal((len(configs), n))
        if sparse:  # one shared ranking; each configuration redraws ~10 % of the questions
            redrawn = rng.random((len(configs), n)) < SPARSE_SHARE
            noise = np.where(redrawn, noise, noise[0])
        scores = 0.5 + SIGMA * (question + noise)
        for i, config in enumerate(configs):
            row = scores[i] + (effect[1] if effect and metric == metrics[0] and config.id == effect[0] else 0.0)
            per_query[config.id][metric] = dict(zip(qids, row.tolist()))
    return per_query


def _tables(spec: GridSpec, seed: int, n: int, rho: float, metrics: tuple[str, ...], sparse: bool,
            effect: tuple[str, float] | None, memo: dict):
    """``summarise`` of one simulated grid, memoised: the first metric's draws do not depend on how
    many metrics follow, and every correction stays within its metric (per-family Holm) or within
    the headline metric (the marked set), so a 1-metric table is the 4-metric one's first metric."""
    key = (seed, n, rho, sparse, effect)
    if key not in memo or memo[key][0] < len(metrics):
        rng = np.random.default_rng(seed)
        memo[key] = (len(metrics), summarise(grid_scores(spec, n, rho, metrics, rng, sparse, effect),
                                             spec.configs(), spec, ci=False))
    table = memo[key][1]
    return table[table["metric"].isin(metrics)] if memo[key][0] > len(metrics) else table


def rates(spec: GridSpec, seeds: int, n: int, rho: float, metrics: tuple[str, ...], sparse: bool = False,
          effect: tuple[str, float] | None = None, alpha: float = DEFAULT_ALPHA, memo: dict | None = None,
          shape: str | None = None) -> dict:
    """``shape``: None (the Gaussian grids above, dense or ``sparse``), "skewed", "ranks" or
    "contextual" (one metric; see the module doc)."""
    any_marked = old_any = hit = old_hit = shown = false_rows = old_false_rows = 0
    memo = {} if memo is None else memo
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        if shape == "skewed":
            tables = [summarise(skewed_scores(spec, n, rng), spec.configs(), spec, ci=False)]
        elif shape == "ranks":
            tables = [summarise(rank_scores(spec, n, rng), spec.configs(), spec, ci=False)]
        elif shape == "contextual":
            tables = contextual_command(spec, n, rho, rng)
        else:
            tables = [_tables(spec, seed, n, rho, metrics, sparse, effect, memo)]
        old = [(t["p_student_holm"] < alpha).fillna(False) for t in tables]
        any_marked += any(bool(t["significant"].any()) for t in tables)
        old_any += any(bool(o.any()) for o in old)
        table = tables[0]
        target = (table["config"] == effect[0]) & (table["metric"] == metrics[0]) if effect else False
        false_rows += int((table["significant"] & ~target).sum()) + sum(int(t["significant"].sum()) for t in tables[1:])
        old_false_rows += int((old[0] & ~target).sum()) + sum(int(o.sum()) for o in old[1:])
        if effect:
            hit += bool(table.loc[target, "significant"].any())
            old_hit += bool(old[0][target].any())
            shown += bool(hit or effect[0] in set(uncontrolled_rows(table, alpha, limit=10 ** 6)["config"]))
    out = {"seeds": seeds, "n": n, "rho": rho, "metrics": len(metrics), "false_rows": false_rows / seeds,
           "old_false_rows": old_false_rows / seeds}
    if effect:
        out.update({"better": effect[0], "delta": effect[1], "power": hit / seeds, "old_power": old_hit / seeds,
                    "shown": shown / seeds})
    else:
        out.update({"differences": shape or ("sparse" if sparse else "dense"), "fwer": any_marked / seeds,
                    "old_fwer": old_any / seeds})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200, help="simulated grids per setting (default 200)")
    parser.add_argument("--quick", action="store_true", help="30 seeds per setting")
    parser.add_argument("--json", type=Path, default=None, help="write every setting's rates here")
    parser.add_argument("--all-power", action="store_true", help="every n × Δ × ρ power setting (8, not the goal's)")
    parser.add_argument("--only", choices=("null", "power"), default=None, help="run only the null or power settings")
    parser.add_argument("--four-metrics", action="store_true",
                        help="also the 4-metric dense and sparse nulls (the marks' rate is the 1-metric one's; "
                             "the old per-family rule's grows with the metrics)")
    args = parser.parse_args(argv)
    seeds = 30 if args.quick else args.seeds
    spec = GridSpec()
    results = {"null": [], "power": [], "sigma": SIGMA, "alpha": DEFAULT_ALPHA, "configs": len(spec.configs()),
               "error_rate": "fwer"}
    started = time.perf_counter()
    memo: dict = {}
    # the marked set reads the headline metric only, so 4 metrics change only the old rule's rates
    nulls = [dict(metrics=m, sparse=sp) for sp in (False, True)
             for m in ((METRICS, METRICS[:1]) if args.four_metrics else (METRICS[:1],))]
    nulls += [dict(metrics=METRICS[:1], shape=shape, n=240 if shape == "skewed" else 150)
              for shape in ("skewed", "ranks", "contextual")]
    for setting in nulls if args.only in (None, "null") else []:  # 4-metric tables serve 1 metric too (memo)
        n = setting.pop("n", 150)
        row = rates(spec, seeds, n, 0.8, memo=memo, **setting)
        results["null"].append(row)
        print(f"null {row['differences']:10} {row['metrics']} metric(s), n {n}, ρ 0.8: fwer {row['fwer']:.3f} "
              f"(old per-family rule {row['old_fwer']:.3f}, {row['old_false_rows']:.2f} false rows/grid)", flush=True)
    powers = [(n, d, r) for n in (100, 240) for d in (0.04, 0.06) for r in (0.5, 0.8)] if args.all_power \
        else [(240, 0.06, 0.5)]
    for n, delta, rho in powers if args.only in (None, "power") else []:
        row = rates(spec, seeds, n, rho, METRICS[:1], effect=(BETTER, delta))
        results["power"].append(row)
        print(f"power n {n}, Δ {delta}, ρ {rho}: {row['power']:.3f} (old rule {row['old_power']:.3f}; "
              f"false rows/grid {row['false_rows']:.3f})", flush=True)
    if args.only in (None, "power"):
        row = rates(spec, seeds, 240, 0.5, METRICS[:1], effect=(BETTER_OUTSIDE, 0.06))
        results["power"].append(row)
        print(f"power n 240, Δ 0.06, ρ 0.5, better at top-5 (outside the marked set): marked {row['power']:.3f}, "
              f"listed as not controlled {row['shown']:.3f} (old rule {row['old_power']:.3f})", flush=True)
    results["seconds"] = round(time.perf_counter() - started, 1)
    null_ok = all(r["fwer"] <= 0.05 for r in results["null"])
    goal = next((r for r in results["power"] if (r["n"], r["delta"], r["rho"], r["better"]) == (240, 0.06, 0.5, BETTER)),
                None)
    print(f"goal: fwer ≤ 0.05 in every null setting: {null_ok if results['null'] else 'not run'}; power at n 240, "
          f"Δ 0.06, ρ 0.5: " + (f"{goal['power']:.3f} (≥ 0.80: {goal['power'] >= 0.8})" if goal else "not run")
          + f"; {results['seconds']} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
