"""The verdict a report opens with: which mode is best on which metric, and whether the paired
tests could tell at all.

It reads the mode comparison's own statistics (:func:`rag_lab.report.comparison.mode_table`: both
paired tests, Holm-corrected over every mode × metric, α): nothing is re-tested here. What it adds
is the power check a reader needs before any p-value: with n paired questions no paired test
(exact sign-flip, Fisher's randomization, or the Student's t the comparison pairs it with) can give
a two-sided p below 2/2^n, and Holm's correction over m comparisons multiplies the smallest p by m.
When m · 2/2^n ≥ α not one difference can be called significant, whatever the scores: the report
says "too few questions to tell (n = …)" instead of a table of p = 1.000.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rag_lab.evaluate.statistics.significance import DEFAULT_ALPHA, DEFAULT_PERMUTATIONS, EXACT_MAX_N


def smallest_p(n: int, n_permutations: int | None = DEFAULT_PERMUTATIONS) -> float:
    """The smallest two-sided p a paired test of n differences can give: 2/2^n for the exact
    sign-flip (every test up to :data:`EXACT_MAX_N` differences); beyond that a randomization test
    of ``n_permutations`` cannot go below 1/(permutations + 1) either (None: an analytic test
    decides, Student's t or Wilcoxon, with no such floor)."""
    if n <= 0:
        return 1.0
    floor = 2.0 ** (1 - n)
    if n <= EXACT_MAX_N or n_permutations is None:
        return floor
    return max(floor, 1.0 / (n_permutations + 1))


def smallest_adjusted_p(n: int, comparisons: int, n_permutations: int | None = DEFAULT_PERMUTATIONS) -> float:
    """The smallest Holm-adjusted p of a family of ``comparisons`` tests of n paired differences each."""
    return min(1.0, max(comparisons, 1) * smallest_p(n, n_permutations))


@dataclass(frozen=True)
class MetricVerdict:
    """One metric: the mode with the highest mean and the modes significantly better / worse than the baseline."""

    metric: str
    best: str
    best_mean: float
    baseline_mean: float
    better: dict[str, tuple[float, float]] = field(default_factory=dict)  # mode → (Δ, p)
    worse: dict[str, tuple[float, float]] = field(default_factory=dict)
    best_p: float = math.nan  # the best mode's p against the baseline (NaN: it is the baseline)
    best_delta: float = math.nan
    tie: bool = False  # every mode has the same mean

    def highest(self) -> str:
        return f"all modes {self.best_mean:.3f}" if self.tie else f"{self.best} {self.best_mean:.3f}"

    def text(self, baseline: str) -> str:
        """What this metric says, in one line."""
        if self.better:
            return "; ".join(f"{mode} better than {baseline} (Δ {delta:+.3f}, p {_p(p)})"
                             for mode, (delta, p) in self.better.items())
        if self.worse:
            return (f"{baseline} best; " + ", ".join(f"{mode} worse (Δ {delta:+.3f}, p {_p(p)})"
                                                      for mode, (delta, p) in self.worse.items()))
        if self.tie:
            return "the same mean in every mode"
        if self.best == baseline:
            return f"{baseline} highest; no significant difference"
        return (f"{self.best} highest (Δ {self.best_delta:+.3f} vs {baseline}, p {_p(self.best_p)}): "
                "not significant")


@dataclass(frozen=True)
class Verdict:
    baseline: str
    modes: list[str]
    n: int  # paired questions of the largest comparison
    comparisons: int  # the Holm family: every mode × metric tested against the baseline
    alpha: float
    floor: float  # the smallest Holm-adjusted p this design can give
    metrics: list[MetricVerdict]
    questions: str = ""  # the question set scored with (run manifest's question_set), named in the headline

    def headline(self) -> str:
        """The report's first sentence, naming the question set it rests on."""
        return self._headline() + (f" — questions: {self.questions}" if self.questions else "")

    @property
    def powered(self) -> bool:
        return self.comparisons > 0 and self.floor < self.alpha

    def _headline(self) -> str:
        if len(self.modes) < 2:
            return f"one mode ({', '.join(self.modes) or '—'}): nothing to compare"
        if not self.powered:
            return f"too few questions to tell (n = {self.n})"
        better: dict[str, list[str]] = {}
        worse: dict[str, list[str]] = {}
        for verdict in self.metrics:
            for mode in verdict.better:
                better.setdefault(mode, []).append(verdict.metric)
            for mode in verdict.worse:
                worse.setdefault(mode, []).append(verdict.metric)
        total = len(self.metrics)
        parts = [f"{mode} is significantly better than {self.baseline} on {_count(names, total)}"
                 for mode, names in sorted(better.items(), key=lambda kv: -len(kv[1]))]
        parts += [f"{mode} is significantly worse than {self.baseline} on {_count(names, total)}"
                  for mode, names in sorted(worse.items(), key=lambda kv: -len(kv[1]))]
        if not parts:
            return f"no mode differs significantly from {self.baseline} on any of the {total} metrics — n = {self.n} questions"
        return "; ".join(parts) + f" — n = {self.n} questions"

    def power_text(self) -> str:
        """Why the tests can or cannot speak, in numbers."""
        holm = (f" after Holm's correction over the {self.comparisons} comparisons (every mode × metric against "
                f"{self.baseline})" if self.comparisons > 1 else "")
        if self.powered:
            return (f"With n = {self.n} paired questions the tests can tell: the smallest p they can give{holm} is "
                    f"{self.floor:.2g}, below α = {self.alpha:g}.")
        single = smallest_p(self.n)
        text = (f"With n = {self.n} paired question{'s' if self.n != 1 else ''} no paired test can give a "
                f"two-sided p below {single:.3g}" + (f" (2/2^{self.n})" if self.n <= EXACT_MAX_N else ""))
        if holm:
            text += f", and{holm} the smallest possible p is {self.floor:.3g}"
        return (text + f": never below α = {self.alpha:g}, so no difference can be called significant, whatever the "
                "scores. The means below describe these questions only; run more questions to compare modes.")


def _count(names: list[str], total: int) -> str:
    return f"{len(names)} of {total} metrics ({', '.join(names)})"


def _p(value: float) -> str:
    """``< 0.001`` or ``= 0.012``: read after "p"."""
    if value is None or value != value:
        return "= n/a"
    return "< 0.001" if value < 0.001 else f"= {value:.3f}"


def build_verdict(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], table, *,
                  alpha: float = DEFAULT_ALPHA, skip: tuple[str, ...] = ()) -> Verdict:
    """The verdict of a mode comparison: ``per_query`` (mode → metric → question → score) and the
    :func:`~rag_lab.report.comparison.mode_table` computed from it. ``skip``: metrics shown but never
    tested (coverage figures)."""
    modes = list(per_query)
    baseline = str(table["baseline"].iloc[0]) if len(table) else (modes[0] if modes else "")
    pairs = []  # (mode, metric, paired n): the comparisons compare_to_baseline made
    for mode, metrics in per_query.items():
        if mode == baseline:
            continue
        for metric, scores in metrics.items():
            base = per_query.get(baseline, {}).get(metric)
            if metric not in skip and base is not None:
                pairs.append((mode, metric, len(set(scores) & set(base))))
    n = max((p[2] for p in pairs), default=max((len(s) for m in per_query.values() for s in m.values()), default=0))
    from rag_lab.evaluate.statistics import policy

    floor = smallest_adjusted_p(n, len(pairs), policy.FLIPS)
    verdicts = []
    for metric in dict.fromkeys(table["metric"]):
        if metric in skip:
            continue
        rows = table[table["metric"] == metric]
        best = rows.loc[rows["mean"].fillna(-math.inf).idxmax()]
        base_rows = rows[rows["mode"] == baseline]
        better, worse = {}, {}
        for _, row in rows[rows["significant"].astype(bool)].iterrows():
            entry = (float(row["delta"]), _decision_p(row))
            (better if row["delta"] > 0 else worse)[row["mode"]] = entry
        verdicts.append(MetricVerdict(
            metric=metric, best=str(best["mode"]), best_mean=float(best["mean"]),
            baseline_mean=float(base_rows["mean"].iloc[0]) if len(base_rows) else math.nan,
            better=better, worse=worse, best_p=_decision_p(best), best_delta=float(best["delta"]),
            tie=len(rows) > 1 and float(rows["mean"].max() - rows["mean"].min()) <= 1e-12))
    return Verdict(baseline=baseline, modes=modes, n=n, comparisons=len(pairs), alpha=alpha, floor=floor,
                   metrics=verdicts)


def _decision_p(row) -> float:
    """The p that decides a mark: the comparison policy's Holm-adjusted p (a table made before the
    policy: both tests had to be below α, so the larger of their two Holm-adjusted p-values)."""
    adjusted = row.get("p_adjusted")
    if adjusted is not None and adjusted == adjusted:
        return float(adjusted)
    values = [row.get("p_student_holm"), row.get("p_fisher_holm")]
    values = [float(v) for v in values if v is not None and v == v]
    return max(values) if values else math.nan


def questions_label(manifest: dict | None) -> str:
    """The question set a run's manifest records, as the verdict names it (empty when none is):
    ``synthetic (qa.synthetic.jsonl, a set of 100)``, ``human (a set of 236)`` — the set, of which a
    run may ask fewer (``--limit``, ``--split``)."""
    entry = (manifest or {}).get("question_set") or {}
    if not entry.get("origin"):
        return ""
    where = f"{Path(entry['path']).name}, " if entry.get("path") and entry["origin"] != "human" else ""
    return f"{entry['origin']} ({where}a set of {entry.get('count', 0)})"


def with_questions(verdict: Verdict, manifest: dict | None) -> Verdict:
    """``verdict`` naming the question set its run's manifest records (unchanged when none is)."""
    import dataclasses

    label = questions_label(manifest)
    return dataclasses.replace(verdict, questions=label) if label else verdict
