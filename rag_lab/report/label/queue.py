"""Which answers a person labels, in which order: every mode's answers interleaved in a seeded order,
or with ``--budget N`` a seeded sample stratified by mode and by judge-score band, saved in
``RUN/label_sample.json`` so a resumed page shows the same sample and the estimator can weight it back."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

from rag_lab.evaluate.statistics.ppi import allocate_budget, score_bands
from rag_lab.evaluate.store.labels import LABEL_SAMPLE, read_label_sample
from rag_lab.evaluate.store.run_folder import write_json_atomic

SEED = 58
DRAWN_BY = ("faithfulness", "factual_correctness")  # the judge's score whose bands stratify the draw


@dataclass(frozen=True)
class Item:
    mode: str
    record: dict

    @property
    def sample_id(self) -> str:
        return str(self.record["id"])

    @property
    def token(self) -> str:
        """What the page posts back: opaque, so the page never names the mode."""
        return hashlib.sha256(f"{self.mode}\0{self.sample_id}".encode()).hexdigest()[:16]


def answered(run) -> list[Item]:
    """The run's answers that can be labelled (an answer text, no error), by mode."""
    from rag_lab.errors import DatasetError

    items = [Item(mode, r) for mode, records in run.records.items() for r in records
             if not r.get("error") and (r.get("answer") or "").strip()]
    if not items:
        raise DatasetError(f"{run.path} holds no answers to label",
                           "label a run of `rag-lab eval` that answered some questions")
    return items


def interleaved(items: list[Item], seed: int = SEED) -> list[Item]:
    """All answers in one seeded order: modes interleaved, no mode's answers in a block."""
    ordered = sorted(items, key=lambda item: (item.mode, item.sample_id))
    random.Random(seed).shuffle(ordered)
    return ordered


def _band(item: Item, metric: str | None) -> int:
    score = (item.record.get("scores") or {}).get(metric) if metric else None
    return int(score_bands([score])[0]) if isinstance(score, (int, float)) else 3  # unscored: a band of its own


def draw_budget(run, items: list[Item], budget: int, seed: int = SEED) -> list[Item]:
    """``budget`` answers: per mode in proportion to its answers, per judge-score band within each mode
    (``allocate_budget``), at random within each band; the draw is saved (and reused when the same budget
    is asked again)."""
    saved = read_label_sample(run.path)
    by_key = {(item.mode, item.sample_id): item for item in items}
    if saved and saved.get("budget") == budget and all(tuple(k) in by_key for k in saved["samples"]):
        return [by_key[tuple(k)] for k in saved["samples"]]
    scored = [m for m in DRAWN_BY if any(m in (item.record.get("scores") or {}) for item in items)]
    metric = scored[0] if scored else None
    rng = random.Random(seed)
    modes = sorted({item.mode for item in items})
    per_mode = allocate_budget([sum(item.mode == m for item in items) for m in modes], budget, minimum=0)
    chosen, strata = [], []
    for mode, count in zip(modes, per_mode):
        mine = sorted((item for item in items if item.mode == mode), key=lambda item: item.sample_id)
        bands = sorted({_band(item, metric) for item in mine})
        members = {b: [item for item in mine if _band(item, metric) == b] for b in bands}
        for band, take in zip(bands, allocate_budget([len(members[b]) for b in bands], count)):
            chosen += rng.sample(members[band], take)
        strata += [[mode, item.sample_id, _band(item, metric)] for item in mine]
    rng.shuffle(chosen)
    write_json_atomic(Path(run.path) / LABEL_SAMPLE, {
        "budget": budget, "seed": seed, "drawn_by": metric,
        "samples": [[item.mode, item.sample_id] for item in chosen], "strata": strata})
    return chosen
