"""Per-question flips: the paired questions whose score on one metric went up or down from A to B,
each with both answers and both top sources, largest change first."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rag_lab.evaluate.compare.pairing import Pairing
from rag_lab.evaluate.compare.scores import metric_scores
from rag_lab.evaluate.statistics.significance import paired_differences
from rag_lab.evaluate.store.frames import EvalRun


@dataclass(frozen=True)
class Side:
    """One run's sample of a question: its score, answer and top-ranked source."""

    score: float
    answer: str
    top_source: str
    top_text: str


@dataclass(frozen=True)
class Flip:
    mode: str
    metric: str
    question_id: str
    question: str
    delta: float
    a: Side
    b: Side

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def top_source(record: dict[str, Any]) -> tuple[str, str]:
    """(``file.pdf p. 3``, its text) of the first retrieved chunk, ("—", "") when none."""
    contexts = sorted(record.get("contexts") or [], key=lambda c: c.get("rank") or 0)
    if not contexts:
        return "—", ""
    first = contexts[0]
    where = str(first.get("filename") or first.get("doc_id") or "?")
    if first.get("page") is not None:
        where += f" p. {first['page']}"
    return where, str(first.get("text") or "")


def _side(record: dict[str, Any], score: float) -> Side:
    where, text = top_source(record)
    return Side(score, str(record.get("answer") or record.get("error") or ""), where, text)


def flips(run_a: EvalRun, run_b: EvalRun, pairing: Pairing, metric: str) -> tuple[list[Flip], list[Flip]]:
    """(better, worse) in B than in A on ``metric``, over every compared mode; largest change first."""
    better, worse = [], []
    for mode in pairing.modes:
        a, b = metric_scores(run_a, mode, metric), metric_scores(run_b, mode, metric)
        records_a = {str(r["id"]): r for r in run_a.records.get(mode, [])}
        records_b = {str(r["id"]): r for r in run_b.records.get(mode, [])}
        for qid in pairing.ids:
            if qid not in a or qid not in b or a[qid] != a[qid] or b[qid] != b[qid]:
                continue
            delta = float(paired_differences([a[qid]], [b[qid]])[0])
            if delta == 0.0:
                continue
            record_a, record_b = records_a[qid], records_b[qid]
            flip = Flip(mode, metric, qid, str(record_a.get("question") or ""), delta,
                        _side(record_a, a[qid]), _side(record_b, b[qid]))
            (better if delta > 0 else worse).append(flip)
    better.sort(key=lambda f: -f.delta)
    worse.sort(key=lambda f: f.delta)
    return better, worse
