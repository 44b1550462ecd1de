"""The spot check: live queries through the real retrievers against the grid's ranking of the same
configuration, at EVERY value of every axis of the grid.

For each mode of the grid, the baseline configuration at the largest top-k, then the baseline with
one axis moved to each of its values — every RRF k, every prefetch, every weight pair (a weight of
0 included), every cap of chunks per document and every top-k — each through a few questions
(rotated, so the points see different questions). A configuration the grid holds but that was not
checked is *confirmed by its axis values*: the grid applies one formula per axis value, so a value
that reproduces the engine at the baseline's other settings is trusted at the others too. A value
whose check differs makes every cell holding it *unconfirmed* (:func:`unconfirmed_values`,
:func:`is_unconfirmed`): the report and the CLI mark those cells; they are what the formula computes
from the cached candidate lists, not what the engine returns.
"""

from __future__ import annotations

from collections.abc import Mapping

from rag_lab.evaluate.ablation.grid import Config, GridResult, GridSpec
from rag_lab.retrieve.configuration import axes, axis as axis_named

SPOT_QUESTIONS = 3  # questions checked per axis value (and mode)
WHAT = {"hybrid": "Qdrant's own RRF (query_points with prefetch + RrfQuery)", "fusion": "the fusion retriever"}


def checked_axes() -> list[str]:
    """The axes the spot check moves, in the lever table's order."""
    return [a.name for a in axes()]


def axis_value(config: Config | Mapping, axis: str) -> str:
    """The value of ``axis`` in a configuration (a :class:`Config` or a results row), as a label
    (KeyError: a row without its column, or an axis the table does not know)."""
    found = axis_named(axis)
    get = config.value if isinstance(config, Config) else config.__getitem__
    values = tuple(get(name) for name in found.fields)
    return found.label(values if found.pair else values[0])


def check_points(spec: GridSpec, mode: str) -> list[tuple[Config, list[tuple[str, str]]]]:
    """The configurations to check for ``mode`` and, for each, the (axis, value) points it stands
    for: the baseline stands for every axis's baseline value, a moved configuration for its value."""
    base = spec.baseline(mode, max(spec.top_k))
    points: dict[str, tuple[Config, list[tuple[str, str]]]] = {base.id: (base, [])}
    for axis in axes():
        for value in spec.axis_values(axis):
            config = base.moved(axis.setting(value))
            entry = points.setdefault(config.id, (config, []))
            entry[1].append((axis.name, axis.label(value)))
    return list(points.values())


def _live_ranking(index, config: Config, query: str) -> list[str]:
    from rag_lab.retrieve.configuration import DEFAULTS
    from rag_lab.retrieve.registry import registry_entry

    retriever = registry_entry(config.mode).load()(index, DEFAULTS.with_levers(**config.levers()))
    return [r.node.node_id for r in retriever.retrieve(query)]


def spot_check(index, questions, queries: dict[str, str], grid: GridResult, spec: GridSpec,
               n_questions: int = SPOT_QUESTIONS) -> dict:
    """Every mode × every axis value (see the module doc) × ``n_questions`` questions.

    Returns the summary the manifest records: ``equal`` (every check), ``checks`` (one per
    configuration × question, each with the axis values it stands for), ``unconfirmed`` (mode →
    axis → values whose check differed) and, at the top level, the first differing check (else the
    last)."""
    checks = []
    n_questions = max(1, min(n_questions, len(questions)))
    offset = 0
    for mode in spec.modes:
        for config, stands_for in check_points(spec, mode):
            for j in range(n_questions):  # rotated: each point sees the next questions
                qid = questions[(offset + j) % len(questions)].qid
                live = _live_ranking(index, config, queries[qid])
                computed = list(grid.chunks[config.id][qid])
                checks.append({"config": config.id, "mode": mode, "prefetch": config.prefetch, "qid": qid,
                               "query": queries[qid], "axes": [list(p) for p in stands_for],
                               "live": live, "grid": computed, "equal": live == computed})
            offset += n_questions
    shown = next((c for c in checks if not c["equal"]), checks[-1])
    modes = list(spec.modes)
    return {**shown, "equal": all(c["equal"] for c in checks), "checks": checks,
            "modes": modes, "prefetch_values": sorted(spec.prefetch), "questions_per_value": n_questions,
            "axes_checked": checked_axes(), "unconfirmed": unconfirmed_values({"checks": checks}),
            "what": "; ".join(f"{m}: {WHAT[m]}" for m in modes)}


def unconfirmed_values(check: Mapping | None) -> dict[str, dict[str, list[str]]]:
    """mode → axis → the values whose live check differed from the grid. Checks written before every
    axis was checked (no ``axes``) stand for their prefetch (and cap, when set)."""
    out: dict[str, dict[str, list[str]]] = {}
    for c in (check or {}).get("checks") or []:
        if c.get("equal", True):
            continue
        mode = c.get("mode") or str(c["config"]).split("|", 1)[0]
        stands_for = c.get("axes")
        if stands_for is None:  # an older manifest: prefetch (and cap) points only
            fields = dict(part.split("=", 1) for part in str(c["config"]).split("|")[1:])
            stands_for = [("prefetch", fields["p"])] + ([("max_per_doc", fields["cap"])] if "cap" in fields else [])
        for axis, value in stands_for:
            values = out.setdefault(mode, {}).setdefault(axis, [])
            if value not in values:
                values.append(value)
    return out


def is_unconfirmed(row: Mapping, unconfirmed: Mapping[str, Mapping[str, list[str]]]) -> bool:
    """Whether a results row (mode, k, prefetch, dense_weight, sparse_weight, max_per_doc, top_k)
    holds an axis value the spot check could not confirm."""
    per_axis = unconfirmed.get(str(row["mode"])) or {}
    for axis, values in per_axis.items():
        try:
            if axis_value(row, axis) in values:
                return True
        except KeyError:  # a row without that column (an older results.csv without caps)
            continue
    return False


def unconfirmed_text(unconfirmed: Mapping[str, Mapping[str, list[str]]]) -> str:
    """``hybrid prefetch 10, 25; fusion weights 0:1`` — for messages."""
    names = {a.name: a.shown for a in axes()}
    return "; ".join(f"{mode} " + ", ".join(f"{names.get(axis, axis)} {' '.join(values)}"
                                           for axis, values in axes.items())
                     for mode, axes in unconfirmed.items())


UNCONFIRMED_MARK = "† unconfirmed"


def live_marks(frame, check: Mapping | None) -> list[str]:
    """Per row of a results frame: :data:`UNCONFIRMED_MARK` when it holds an unconfirmed axis value."""
    unconfirmed = unconfirmed_values(check)
    return [UNCONFIRMED_MARK if unconfirmed and is_unconfirmed(row, unconfirmed) else ""
            for _, row in frame.iterrows()]


def with_live_marks(shown, rows, check: Mapping | None):
    """``shown`` (a display table made row for row from the results ``rows``) with a ``live check``
    column when any row is unconfirmed."""
    marks = live_marks(rows, check)
    return shown.assign(**{"live check": marks}) if any(marks) else shown


def spot_check_lines(check: Mapping, dataset: str) -> list[str]:
    """What the CLI prints about the spot check: what was checked, and — when a value could not be
    confirmed — what that means and what to do."""
    checks = check.get("checks") or [check]
    modes = check.get("modes") or [check["mode"]]
    if "axes_checked" in check:
        nouns = [a.noun for a in axes()]
        scope = (f"{len(checks)} live queries: every {', '.join(nouns[:-1])} and {nouns[-1]} of the grid, "
                 f"{check.get('questions_per_value', SPOT_QUESTIONS)} questions each")
    else:  # an older manifest: prefetch values only
        scope = f"{len(checks)} live queries at prefetch {', '.join(str(p) for p in check.get('prefetch_values', []))}"
    head = f"spot check ({', '.join(modes)}; {scope}): "
    if check["equal"]:
        return [head + "live rankings equal the grid's"]
    unconfirmed = unconfirmed_values(check)
    differ = sum(not c["equal"] for c in checks)
    return [head + f"live ranking DIFFERS from the grid's in {differ} of {len(checks)} queries, at "
            f"{unconfirmed_text(unconfirmed)} (first: {check['config']}, question {check['qid']}; all in "
            "manifest.json → spot_check.checks).",
            "  Cells holding those values are UNCONFIRMED (marked '†' here and in the report): they are what the "
            "grid's formula computes from the cached candidate lists, not what the engine returns. Do not pick a "
            "configuration from them on the grid's word: measure it live (e.g. `rag-lab ir "
            f"{dataset} --modes <mode> --prefetch P --fusion-k K --dense-weight W --sparse-weight W`), and if the "
            "index was rebuilt since the legs were cached, rerun ablate with a fresh --out."]
