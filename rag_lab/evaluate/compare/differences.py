"""Paired differences of two runs per mode × metric, marked by the lab's one policy.

Each row: both means over the paired questions, B − A with its seeded 95 % bootstrap interval,
the policy's decision test (:func:`rag_lab.evaluate.statistics.policy.decide_pair`), and Holm over
every row the command prints with a test (:func:`policy.adjust`), so the family-wise error over
every mark stays ≤ α. Rows not compared (a judged metric under a changed judge, a metric one run
lacks) are printed with the reason and are not in the family.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rag_lab.evaluate.compare.pairing import Pairing
from rag_lab.evaluate.compare.scores import calibrated_scores, is_judged, metric_scores
from rag_lab.evaluate.statistics import policy
from rag_lab.evaluate.statistics.significance import bootstrap_ci
from rag_lab.evaluate.store.frames import EvalRun

CALIBRATED = "calibrated"  # a judged row read from corrected values (PPI++ with the runs' labels)
COLUMNS = ["mode", "metric", "judged", "mean_a", "mean_b", "delta", "ci_low", "ci_high", "n", "n_dropped", "p_value",
           "decided_by", "p_adjusted", "significant", "basis", "note"]


def paired_rows(run_a: EvalRun, run_b: EvalRun, pairing: Pairing, metrics: Sequence[str], *,
                skip_judged: str | None = None, ci: bool = True) -> pd.DataFrame:
    """One row per mode × metric. ``skip_judged``: why judged metrics are not compared (None: they are);
    ``ci=False`` leaves the intervals out (NaN; the marks do not read them — simulations)."""
    rows = []
    for mode in pairing.modes:
        for metric in metrics:
            row = {"mode": mode, "metric": metric, "judged": is_judged(metric), "basis": "", "note": ""}
            a, b = metric_scores(run_a, mode, metric), metric_scores(run_b, mode, metric)
            if skip_judged and row["judged"]:
                rows.append({**row, "note": skip_judged})
                continue
            if not a or not b:
                rows.append({**row, "note": f"not scored in {'A' if not a else 'B'}"})
                continue
            a, b, row["basis"] = _calibrated_pair(run_a, run_b, mode, metric, a, b)
            ids = [q for q in pairing.ids if q in a and q in b]
            x, y = np.array([a[q] for q in ids], dtype=float), np.array([b[q] for q in ids], dtype=float)
            p, decided, dropped = policy.decide_pair(x, y)
            scored = ~(np.isnan(x) | np.isnan(y))
            d = y[scored] - x[scored]
            interval = bootstrap_ci(d) if ci else {"ci_low": np.nan, "ci_high": np.nan}
            rows.append({**row, "mean_a": float(x[scored].mean()) if scored.any() else np.nan,
                         "mean_b": float(y[scored].mean()) if scored.any() else np.nan,
                         "delta": float(d.mean()) if d.size else np.nan,
                         "ci_low": interval["ci_low"], "ci_high": interval["ci_high"],
                         "n": int(scored.sum()), "n_dropped": dropped, "p_value": p, "decided_by": decided})
    frame = pd.DataFrame(rows).reindex(columns=COLUMNS)
    tested = frame["p_value"].notna()
    frame["p_adjusted"] = np.nan
    if tested.any():
        frame.loc[tested, "p_adjusted"] = policy.adjust(frame.loc[tested, "p_value"].to_numpy(dtype=float))
    frame["significant"] = tested & policy.is_significant(frame["p_adjusted"].to_numpy(dtype=float))
    frame["note"] = frame["note"].fillna("")
    frame["basis"] = frame["basis"].fillna("")
    return frame


def _calibrated_pair(run_a: EvalRun, run_b: EvalRun, mode: str, metric: str, a: dict, b: dict):
    """Both runs' corrected values when a person's labels calibrate the judge in both; the judge's
    own scores otherwise (a corrected side against a raw one would compare two instruments)."""
    corrected_a, corrected_b = calibrated_scores(run_a, mode, metric), calibrated_scores(run_b, mode, metric)
    if corrected_a and corrected_b:
        return corrected_a, corrected_b, CALIBRATED
    if corrected_a or corrected_b:
        return a, b, f"judge alone: labels in {'A' if corrected_a else 'B'} only"
    return a, b, "judge alone" if is_judged(metric) else ""


def family_size(table: pd.DataFrame) -> int:
    return int(table["p_value"].notna().sum())


def row_text(row) -> str:
    """``hybrid ndcg@10 +0.031 [+0.012, +0.050], significant``."""
    head = f"{row['mode']} {row['metric']}"
    if row["note"]:
        return f"{head}: {row['note']}"
    if row["delta"] != row["delta"]:
        return f"{head}: no scored pair"
    mark = "significant" if row["significant"] else "not significant"
    basis = f", {row['basis']}" if row["basis"] else ""
    return (f"{head} {row['delta']:+.3f} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}], {mark} "
            f"(p {_p(row['p_adjusted'])}, n {int(row['n'])}{basis})")


def _p(value) -> str:
    return "—" if value != value else f"{value:.3f}" if value >= 0.001 else "<0.001"
