"""Two evaluation runs compared: what changed in the set-up, the paired differences per mode ×
metric under the lab's one policy, and the per-question flips.

    result = compare_runs("runs/a", "runs/b")
    result.verdict()   # "B differs from A in: embedding model; hybrid ndcg@10 +0.031 [+0.012, +0.050], significant …"
    result.table       # one row per mode × metric (see differences.COLUMNS)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rag_lab.errors import ConfigError
from rag_lab.evaluate.compare import differences as D
from rag_lab.evaluate.compare.facets import Change, differences
from rag_lab.evaluate.compare.flips import Flip, flips
from rag_lab.evaluate.compare.inputs import open_run
from rag_lab.evaluate.compare.pairing import Pairing, pair, shared_modes
from rag_lab.evaluate.compare.scores import headline, is_judged, scored_metrics
from rag_lab.evaluate.statistics import policy
from rag_lab.evaluate.store.frames import EvalRun

VERDICT_ROWS = 4
JUDGE_CHANGED = "not compared: the judge differs (--allow-judge-change compares anyway)"


@dataclass
class Comparison:
    run_a: EvalRun
    run_b: EvalRun
    pairing: Pairing
    changes: list[Change]
    table: pd.DataFrame
    flip_metric: str | None
    better: list[Flip] = field(default_factory=list)
    worse: list[Flip] = field(default_factory=list)
    judge_changed: bool = False
    allow_judge_change: bool = False

    @property
    def family(self) -> int:
        return D.family_size(self.table)

    def changed_text(self) -> str:
        if not self.changes:
            return "B does not differ from A in set-up"
        return "B differs from A in: " + "; ".join(c.brief() if c.label != "code commit" else c.label
                                                   for c in self.changes)

    def verdict(self) -> str:
        """The one line: what changed, then the significant differences (the flip metric's first, at
        most :data:`VERDICT_ROWS`), else the flip metric's rows, not significant."""
        table = self.table
        significant = table[table["significant"]]
        if len(significant):
            ordered = significant.assign(first=significant["metric"] != self.flip_metric).sort_values("first", kind="stable")
            shown = [D.row_text(r) for _, r in ordered.head(VERDICT_ROWS).iterrows()]
            if len(ordered) > VERDICT_ROWS:
                shown.append(f"{len(ordered) - VERDICT_ROWS} more significant (see the table)")
        else:
            rows = table[(table["metric"] == self.flip_metric) & table["p_value"].notna()]
            shown = ["no significant difference"] + ([D.row_text(r) for _, r in rows.iterrows()]
                                                    or ["nothing could be compared"])
        text = f"{self.changed_text()}; " + "; ".join(shown)
        if self.pairing.dropped:
            text += f" ({self.pairing.text()})"
        return text

    @property
    def too_few_questions(self) -> bool:
        """No row can be significant: the smallest exact sign-flip p at the largest n, times the family."""
        largest = int(self.table["n"].max()) if self.family else 0
        return bool(self.family) and min(1.0, self.family * 2.0 ** (1 - largest)) >= policy.ALPHA

    def notes(self) -> list[str]:
        out = [f"{self.pairing.text()}; modes {', '.join(self.pairing.modes)}",
               policy.family_text(self.family, "every mode × metric compared")]
        out += [f"A {note}" for note in self.run_a.notes] + [f"B {note}" for note in self.run_b.notes]  # cut-off lines
        if self.too_few_questions:
            largest = int(self.table["n"].max())
            out.append(f"too few questions to tell: with n = {largest} paired questions the smallest p a paired test "
                       f"can give is {2.0 ** (1 - largest):.3g}, and Holm over {self.family} comparisons keeps every "
                       f"one above {policy.ALPHA:g} — no difference can be significant and the regression gate "
                       "cannot fail; compare runs of more questions")
        if self.judge_changed:
            out.append("the judge differs between the runs: "
                       + ("judged metrics compared anyway (--allow-judge-change)" if self.allow_judge_change
                          else "judged metrics are not compared"))
        return out

    def to_json(self) -> dict[str, Any]:
        def side(run: EvalRun) -> dict[str, Any]:
            return {"path": str(run.path), "created_at": run.manifest.get("created_at")}

        rows = json.loads(self.table.to_json(orient="records"))  # NaN → null, numpy → JSON types
        return {"a": side(self.run_a), "b": side(self.run_b), "verdict": self.verdict(), "notes": self.notes(),
                "questions": {"paired": len(self.pairing.ids), "only_a": self.pairing.only_a,
                              "only_b": self.pairing.only_b},
                "modes": list(self.pairing.modes),
                "changes": [{"facet": c.label, "judge": c.judge,
                             "fields": [{"field": p, "a": a, "b": b} for p, a, b in c.fields]} for c in self.changes],
                "significance": {"family": self.family, "alpha": policy.ALPHA, "correction": policy.CORRECTION,
                                 "test": policy.TEST_TEXT},
                "differences": rows,
                "flips": {"metric": self.flip_metric, "better": [f.to_json() for f in self.better],
                          "worse": [f.to_json() for f in self.worse]}}


def _metrics(run_a: EvalRun, run_b: EvalRun, modes: Sequence[str], wanted: Sequence[str] | None) -> list[str]:
    in_a, in_b = scored_metrics(run_a, modes), scored_metrics(run_b, modes)
    available = list(dict.fromkeys(in_a + in_b))
    if not wanted:
        return available
    missing = [m for m in wanted if m not in available]
    if missing:
        raise ConfigError(f"metric {', '.join(missing)} is in neither run",
                          f"choose from {', '.join(available)}")
    return list(wanted)


def compare_runs(run_a: str | Path, run_b: str | Path, *, modes: Sequence[str] | None = None,
                 metrics: Sequence[str] | None = None, intersect: bool = False, allow_judge_change: bool = False,
                 flip_metric: str | None = None) -> Comparison:
    """Compare run B against run A (both ``rag-lab eval --out`` folders): see the module note."""
    a, b = open_run(run_a), open_run(run_b)
    compared_modes = shared_modes(a, b, modes)
    pairing = pair(a, b, compared_modes, intersect=intersect)
    chosen = _metrics(a, b, compared_modes, metrics)
    changes = differences(a.manifest, b.manifest)
    judge_changed = any(c.judge for c in changes)
    skip = JUDGE_CHANGED if judge_changed and not allow_judge_change else None
    table = D.paired_rows(a, b, pairing, chosen, skip_judged=skip)
    if flip_metric is not None and flip_metric not in chosen:
        raise ConfigError(f"flip metric {flip_metric} is not among the compared metrics",
                          f"choose from {', '.join(chosen)}")
    comparable = [m for m in chosen if not (skip and is_judged(m))]
    shown = flip_metric or headline(comparable)
    better, worse = flips(a, b, pairing, shown) if shown else ([], [])
    return Comparison(a, b, pairing, changes, table, shown, better, worse, judge_changed, allow_judge_change)
