"""``rag-lab label RUN --plan``: from the labels so far, how many more would bring each mode's interval
of each calibrated metric to a target width."""

from __future__ import annotations

from rag_lab.evaluate.calibration import METRIC_LABELS, NO_JUDGED_METRIC, calibrated_judged
from rag_lab.evaluate.statistics.calibrate import labels_for_width

DEFAULT_TARGET_WIDTH = 0.10


def plan_lines(run, target_width: float = DEFAULT_TARGET_WIDTH) -> list[str]:
    result = calibrated_judged(run)
    lines = [f"labels needed for a 95 % interval of width {target_width:g} (PPI++; widths fall as 1/√labels):"]
    labelled_metrics = [m for m in result if m in METRIC_LABELS]
    if not labelled_metrics:
        return [f"{run.path}: {NO_JUDGED_METRIC}: nothing to plan"]
    for metric in labelled_metrics:
        entry = result[metric]
        if not entry.by_mode:
            most = max((len(items) for items in run.records.values()), default=0)
            needed = labels_for_width_unlabelled(target_width)
            cap = f"; more than the run's {most} answers a mode: label them all" if needed > most else ""
            lines.append(f"  {metric}: no labels yet — about {needed} per mode "
                         f"(worst case, before the judge's agreement is known){cap}")
            continue
        for mode, c in entry.by_mode.items():
            more = labels_for_width(c, target_width, available=c.n - c.n_labelled)
            width = f"width {c.width:.3f}" if c.n_labelled >= 2 else "no interval yet"
            if c.n_labelled >= c.n and not c.width <= target_width:
                advice = "every answer is labelled: only more questions (`eval --limit`) narrow it further"
            elif more and c.n_labelled + more >= c.n:
                advice = f"{more} more (every answer of the mode; the width may stay above the target)"
            else:
                advice = f"{more} more" if more else "the target is reached"
            lines.append(f"  {metric} · {mode}: {c.n_labelled} of {c.n} labelled, {width}; {advice}")
    return lines


def labels_for_width_unlabelled(target_width: float) -> int:
    from scipy.stats import norm

    return int((2 * norm.ppf(0.975) * 0.5 / target_width) ** 2 + 0.999)
