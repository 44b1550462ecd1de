"""The regression gate: fail when B is controlled-worse than A.

A regression is a row of the comparison that is significant under the lab's policy (Holm over
everything compare prints), with B below A, and — when the gate names a tolerance — a drop larger
than it. ``spec`` is ``--fail-on-regression``'s value: empty (every compared metric) or
``METRIC[:DELTA],…`` (``ndcg@10:0.02,key_fact_recall``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from rag_lab.errors import ConfigError


@dataclass(frozen=True)
class Rule:
    metric: str | None  # None: every compared metric
    tolerance: float = 0.0  # a significant drop must be larger than this to count

    def text(self) -> str:
        what = self.metric or "any metric"
        return f"{what} (drop > {self.tolerance:g})" if self.tolerance else what


@dataclass(frozen=True)
class GateVerdict:
    failed: bool
    lines: tuple[str, ...]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def parse_rules(spec: str | None) -> list[Rule]:
    """``"ndcg@10:0.02,rouge_l"`` → rules; ``""``/None → one rule over every metric."""
    rules = []
    for part in (spec or "").split(","):
        part = part.strip()
        if not part:
            continue
        metric, _, tolerance = part.partition(":")
        try:
            value = float(tolerance) if tolerance else 0.0
        except ValueError:
            value = -1.0
        if not metric or value < 0 or value != value:
            raise ConfigError(f"--fail-on-regression: {part!r} is not METRIC[:DELTA] (DELTA a number ≥ 0)",
                              "e.g. --fail-on-regression ndcg@10:0.02,key_fact_recall")
        rules.append(Rule(metric.strip(), value))
    return rules or [Rule(None)]


def check(table: pd.DataFrame, rules: list[Rule]) -> GateVerdict:
    """Every rule against the comparison table (its metrics checked by the caller)."""
    lines, failed = [], False
    for rule in rules:
        rows = table if rule.metric is None else table[table["metric"] == rule.metric]
        regressions = rows[rows["significant"].astype(bool) & (rows["delta"] < -rule.tolerance)]
        if len(regressions):
            failed = True
            for _, row in regressions.iterrows():
                lines.append(f"REGRESSION {row['mode']} {row['metric']}: {row['delta']:+.3f} "
                             f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}], significant (p {row['p_adjusted']:.3g})"
                             + (f", beyond the tolerance {rule.tolerance:g}" if rule.tolerance else ""))
            continue
        drops = rows[rows["significant"].astype(bool) & (rows["delta"] < 0)]
        tested = rows[rows["p_value"].notna()]
        if len(drops):
            lines.append(f"ok {rule.text()}: significant drops within the tolerance "
                         f"({', '.join(f'{r.mode} {r.delta:+.3f}' for r in drops.itertuples())})")
        elif not len(tested):
            lines.append(f"ok {rule.text()}: nothing compared (see the table's notes)")
        else:
            lines.append(f"ok {rule.text()}: no significant drop in {len(tested)} comparison(s)")
    return GateVerdict(failed, tuple(lines))
