"""Every fusion configuration from cached candidate lists, vectorised.

Given each question's two ranked candidate lists (retrieved once at the largest prefetch), the
fused ranking of a configuration (RRF k, prefetch p, leg weights, top-k) is

    score(item) = [dense_rank ≤ p] · 1/(k + dense_rank/w_dense) + [sparse_rank ≤ p] · 1/(k + sparse_rank/w_sparse)

(:func:`rag_lab.fusion.rrf.rrf_terms`, ranks from 1), over every item in either leg's top-p — a leg
of weight 0 adds 0 but its items stay candidates, as in Qdrant's RRF and the ``fusion`` retriever —
sorted best first, ties by the one tie rule (:func:`rag_lab.fusion.tie_key`: dense rank, then sparse
rank) that the ``fusion`` retriever and ``hybrid`` (Qdrant's RRF with ``k + 1``) both follow. The
ranks at prefetch p are the top-p of the deep list for ``fusion`` (ties broken by a stable key make
it the live retriever's top-p) and, for ``hybrid``, the engine's own top-p lists when the cache holds
them (:func:`leg_at`; Qdrant's top-p is not a prefix of its top-P where leg scores tie). A top-k is
a prefix of the top-max(k) ranking, so one array pass per question set covers the whole grid. A cap of M chunks per
document (:func:`rag_lab.retrieve.configuration.cap_per_document`, the function the retrievers use) is
applied to the whole fused list before the top-k cut, as is any axis the lever table
(:mod:`rag_lab.retrieve.configuration`) adds with a kernel.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from rag_lab.fusion.rrf import rrf_terms
from rag_lab.retrieve.configuration import Axis, axes, compared_axes, kernel_axes
from rag_lab.retrieve.post_fusion import needs_whole_list, post_fusion
from rag_lab.retrieve.registry import engine_fuses, mode_legs

# The mode → (dense leg, sparse leg) each two-leg RRF mode of the retriever registry fuses.
MODE_LEGS = mode_legs()
GRID_MODES = tuple(MODE_LEGS)


@dataclass(frozen=True, init=False)
class GridSpec:
    """The modes and, for every axis of the lever table (:func:`rag_lab.retrieve.configuration.axes`),
    its values: ``GridSpec(fusion_k=(1, 60), top_k=(5,))``, an axis not given keeping the table's
    ``grid_values``. ``default_<axis name>=`` (``default_k``, ``default_prefetch``) names the grid's own
    baseline value of an axis that allows one; every other baseline is the lab's default when the
    grid holds it (else the axis's fallback). Each axis's values read as an attribute (``spec.prefetch``)."""

    modes: tuple[str, ...]
    values: tuple[tuple[str, tuple], ...]  # (axis key, its values), in the table's order
    defaults: tuple[tuple[str, Any], ...]  # (axis name, the grid's own baseline value)

    def __init__(self, modes: Sequence[str] = GRID_MODES, values: Sequence[tuple[str, tuple]] = (),
                 defaults: Sequence[tuple[str, Any]] = (), **axis_values: Any) -> None:
        table = axes()
        given, own = dict(values), dict(defaults)
        keys = {a.key for a in table}
        settable = {a.name for a in table if a.grid_default}
        for name, value in axis_values.items():
            if name in keys:
                given[name] = tuple(value)
            elif name.startswith("default_") and name.removeprefix("default_") in settable:
                own[name.removeprefix("default_")] = value
            else:
                raise TypeError(f"GridSpec has no axis {name!r} (axes: {', '.join(sorted(keys))})")
        object.__setattr__(self, "modes", tuple(modes))
        object.__setattr__(self, "values", tuple((a.key, tuple(given.get(a.key, a.grid_values))) for a in table))
        object.__setattr__(self, "defaults", tuple((a.name, own.get(a.name, a.lab_default()))
                                                   for a in table if a.grid_default))
        self._check()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("values", "defaults", "modes"):
            raise AttributeError(name)
        for key, values in self.values:
            if key == name:
                return values
        for axis_name, value in self.defaults:
            if name == f"default_{axis_name}":
                return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _check(self) -> None:
        for name in ("modes", *(key for key, _ in self.values)):
            if not (self.modes if name == "modes" else getattr(self, name)):
                raise ValueError(f"the ablation grid needs at least one value of {name}")
        unknown = [m for m in self.modes if m not in MODE_LEGS]
        if unknown:
            raise ValueError(f"ablation modes must be among {', '.join(GRID_MODES)}, got {', '.join(unknown)}")
        for axis in axes():
            if axis.check:
                axis.check(self.axis_values(axis))

    @classmethod
    def single(cls, config: "Config") -> "GridSpec":
        """A grid of exactly ``config`` (its values as the grid's defaults)."""
        table = axes()
        return cls(modes=(config.mode,), **{a.key: (a.value_of(config),) for a in table},
                   **{f"default_{a.name}": a.value_of(config) for a in table if a.grid_default})

    def axis_values(self, axis: Axis) -> tuple:
        return dict(self.values)[axis.key]

    @property
    def depth(self) -> int:
        """How deep each leg is retrieved (once): the largest prefetch."""
        return max(self.prefetch)

    def baseline_value(self, axis: Axis) -> Any:
        """The axis's value in every baseline: the grid's own default, else the lab's, when the grid
        holds it, else the axis's fallback (k: the last, prefetch: the largest, others: the first)."""
        return axis.baseline(self.axis_values(axis), dict(self.defaults).get(axis.name, axis.lab_default()))

    def baseline_text(self) -> str:
        """The baseline's values, e.g. ``k=60 prefetch=100 weights=1:1 max_per_doc=0``."""
        return " ".join(f"{a.name}={a.text(self.baseline_value(a))}" for a in compared_axes())

    def baseline(self, mode: str, top_k: int) -> "Config":
        """``mode`` at every compared axis's baseline value, at ``top_k``."""
        settings: dict[str, Any] = {"top_k": top_k}
        for axis in compared_axes():
            settings.update(axis.setting(self.baseline_value(axis)))
        return Config.of(mode, settings)

    def configs(self) -> list["Config"]:
        table = axes()
        return [Config.of(mode, {f: v for axis, value in zip(table, point) for f, v in axis.setting(value).items()})
                for mode in self.modes for point in itertools.product(*(self.axis_values(a) for a in table))]

    def to_dict(self) -> dict:
        return {"modes": list(self.modes),
                **{key: [list(v) if isinstance(v, tuple) else v for v in values] for key, values in self.values},
                **{f"default_{name}": value for name, value in self.defaults}}


@dataclass(frozen=True)
class Config:
    """One configuration of the grid. Axes the table adds beyond these attributes keep their values
    in ``more`` (field → value, left out at the axis's default, so equal configurations are equal)."""

    mode: str
    k: int
    prefetch: int
    dense_weight: float
    sparse_weight: float
    top_k: int
    max_per_doc: int = 0  # 0 = no cap
    more: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, mode: str, settings: dict[str, Any]) -> "Config":
        """``mode`` with ``settings`` (attribute or table field → value)."""
        own = {name: value for name, value in settings.items() if name in _ATTRIBUTES}
        defaults = {f: v for a in axes() for f, v in a.setting(a.lab_default()).items()}
        more = tuple((name, value) for name, value in settings.items()
                     if name not in _ATTRIBUTES and value != defaults.get(name))
        return cls(mode, **own, more=more)

    def value(self, field_name: str) -> Any:
        """The value of one field of the lever table (an attribute, or an added axis's)."""
        if field_name in _ATTRIBUTES:
            return getattr(self, field_name)
        extra = dict(self.more)
        if field_name in extra:
            return extra[field_name]
        for axis in axes():
            if field_name in axis.fields:
                return axis.setting(axis.lab_default())[field_name]
        raise KeyError(field_name)

    def moved(self, settings: dict[str, Any]) -> "Config":
        """This configuration with ``settings`` changed."""
        current = {name: getattr(self, name) for name in _ATTRIBUTES} | dict(self.more)
        return Config.of(self.mode, current | settings)

    def levers(self) -> dict[str, Any]:
        """The configuration in lever names (``fusion_k`` …), the cut (``top_k``) included."""
        return {lever: value for a in axes()
                for lever, value in zip(a.lever_names, (a.value_of(self),) if not a.pair else a.value_of(self))}

    @cached_property
    def id(self) -> str:
        # axes whose token is left out at their default come last: adding one keeps every earlier id
        parts = [self.mode]
        for axis in sorted(axes(), key=lambda a: not a.token_at_default):
            value = axis.value_of(self)
            if axis.token_at_default or value != axis.lab_default():
                parts.append(f"{axis.token}={axis.text(value)}")
        return "|".join(parts)

    def to_dict(self) -> dict:
        extra = {f: self.value(f) for a in axes() for f in a.fields if f not in _ATTRIBUTES}
        return {"config": self.id, "mode": self.mode, "k": self.k, "prefetch": self.prefetch,
                "dense_weight": self.dense_weight, "sparse_weight": self.sparse_weight, "top_k": self.top_k,
                "max_per_doc": self.max_per_doc, **extra}


_ATTRIBUTES = ("k", "prefetch", "dense_weight", "sparse_weight", "top_k", "max_per_doc")


@dataclass
class Candidates:
    """One question's leg lists: ``legs[name] = [(chunk_id, doc_key, score), ...]`` best first."""

    qid: str
    legs: dict[str, list[tuple[str, str, float]]]


@dataclass
class GridResult:
    """``chunks[config_id][qid]``: the fused chunk ids, best first; ``docs`` the same folded to
    document keys (first occurrence, i.e. best chunk, wins)."""

    spec: GridSpec
    configs: list[Config]
    chunks: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    docs: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)


def leg_at(question: Candidates, leg: str, prefetch: int, engine_lists: bool) -> list[tuple[str, str, float]]:
    """The list a leg contributes at ``prefetch``: the engine's own top-p list when cached and asked
    for (``hybrid``: what Qdrant's prefetch fuses, see :mod:`.legs`), else the deep list, whose
    top-p is the live retriever's (ties by a stable key)."""
    if engine_lists and f"{leg}@{prefetch}" in question.legs:
        return question.legs[f"{leg}@{prefetch}"]
    return question.legs.get(leg, [])


def _rank_matrix(questions: Sequence[Candidates], dense: str, sparse: str, prefetches: Sequence[int],
                 engine_lists: bool):
    """Per question: its candidate ids (every id of either leg at any prefetch) and both legs'
    1-based ranks per prefetch, (questions, prefetches, candidates) arrays (inf = absent)."""
    order: list[list[str]] = []
    doc_of: dict[str, str] = {}
    width = 1
    for q in questions:
        seen: dict[str, None] = {}
        for p in prefetches:
            for chunk_id, doc, _ in itertools.chain(leg_at(q, dense, p, engine_lists), leg_at(q, sparse, p, engine_lists)):
                doc_of[chunk_id] = doc
                seen.setdefault(chunk_id, None)
        order.append(list(seen))
        width = max(width, len(seen))
    dense_ranks = np.full((len(questions), len(prefetches), width), np.inf)
    sparse_ranks = np.full((len(questions), len(prefetches), width), np.inf)
    for row, (q, ids) in enumerate(zip(questions, order)):
        column = {chunk_id: i for i, chunk_id in enumerate(ids)}
        for pi, p in enumerate(prefetches):
            for leg, target in ((dense, dense_ranks), (sparse, sparse_ranks)):
                rank = 0
                seen_leg: set[str] = set()
                for chunk_id, _, _ in leg_at(q, leg, p, engine_lists):
                    if chunk_id in seen_leg:  # an id repeated inside one list counts once, at its best rank
                        continue
                    seen_leg.add(chunk_id)
                    rank += 1
                    target[row, pi, column[chunk_id]] = rank
    return order, doc_of, dense_ranks, sparse_ranks


def fused_order(dense_ranks: np.ndarray, sparse_ranks: np.ndarray, ks: Sequence[float], prefetches: Sequence[int],
                weights: Sequence[tuple[float, float]], depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised RRF over the grid.

    ``dense_ranks``/``sparse_ranks``: (questions, prefetches, candidates) 1-based ranks, inf where absent.
    Returns ``order`` (Q, K, P, W, depth) candidate column indices best first and ``count``
    (Q, P): how many of them are candidates at that prefetch (in either leg's top-p). A leg of
    weight 0 adds 0 to the score but its items stay candidates, after every positive score — as in
    Qdrant's RRF (a weight ≤ 0 scores the leg's points 0 and still returns them) and the ``fusion``
    retriever. Order: score best first, then the one tie rule (dense rank, then sparse rank, counting
    a rank past the prefetch as absent); the rest (in neither top-p) come last and are not results.
    """
    k = np.asarray(ks, dtype=float)[None, :, None, None, None]
    p = np.asarray(prefetches, dtype=float)[None, None, :, None, None]
    wd = np.asarray([w[0] for w in weights], dtype=float)[None, None, None, :, None]
    ws = np.asarray([w[1] for w in weights], dtype=float)[None, None, None, :, None]
    rd = dense_ranks[:, None, :, None, :]
    rs = sparse_ranks[:, None, :, None, :]
    in_dense, in_sparse = rd <= p, rs <= p
    score = np.where(in_dense, rrf_terms(rd, k, wd), 0.0) + np.where(in_sparse, rrf_terms(rs, k, ws), 0.0)
    score = np.where(in_dense | in_sparse, score, -1.0)  # not a candidate at this prefetch: last
    shape = np.broadcast_shapes(score.shape, in_dense.shape)
    dense_key = np.broadcast_to(np.where(in_dense, rd, np.inf), shape)
    sparse_key = np.broadcast_to(np.where(in_sparse, rs, np.inf), shape)
    order = np.lexsort((sparse_key, dense_key, np.broadcast_to(-score, shape)), axis=-1)[..., :depth]
    count = (in_dense | in_sparse).sum(axis=-1)[:, 0, :, 0]
    return order, count


def compute_grid(questions: Sequence[Candidates], spec: GridSpec) -> GridResult:
    """Fused chunk and document rankings of every configuration of ``spec`` for every question."""
    configs = spec.configs()
    result = GridResult(spec, configs, {c.id: {} for c in configs}, {c.id: {} for c in configs})
    max_top = max(spec.top_k)
    kernels = kernel_axes()
    points = list(itertools.product(*(spec.axis_values(a) for a in kernels)))
    # a kernel off its default (a cap refilling the top-k from further down) needs the whole fused list
    whole = any(needs_whole_list(list(zip(kernels, point))) for point in points)
    for mode in spec.modes:
        dense, sparse = MODE_LEGS[mode]
        order, doc_of, dense_ranks, sparse_ranks = _rank_matrix(questions, dense, sparse, spec.prefetch,
                                                                engine_lists=engine_fuses(mode))
        depth = dense_ranks.shape[-1] if whole else max_top
        ranked, count = fused_order(dense_ranks, sparse_ranks, spec.fusion_k, spec.prefetch, spec.weights, depth)
        cells = list(itertools.product(enumerate(spec.fusion_k), enumerate(spec.prefetch), enumerate(spec.weights)))
        ids = {(ki, pi, wi, point, top): Config.of(mode, {"k": k, "prefetch": p, "dense_weight": wd, "sparse_weight": ws,
                                                          "top_k": top, **_settings(kernels, point)}).id
               for (ki, k), (pi, p), (wi, (wd, ws)) in cells for point in points for top in spec.top_k}
        for qi, q in enumerate(questions):
            chunk_ids = order[qi]
            for (ki, _), (pi, _), (wi, _) in cells:
                n = int(count[qi, pi])
                fused = [chunk_ids[c] for c in ranked[qi, ki, pi, wi, : min(n, depth)]]
                for point in points:
                    best = post_fusion(fused, list(zip(kernels, point)), doc_of.__getitem__, max_top)  # the live step
                    for top in spec.top_k:
                        chunks = tuple(best[:top])
                        cid = ids[ki, pi, wi, point, top]
                        result.chunks[cid][q.qid] = chunks
                        result.docs[cid][q.qid] = tuple(dict.fromkeys(doc_of[c] for c in chunks))
    return result


def _settings(kernels: Sequence[Axis], point: tuple) -> dict[str, Any]:
    return {f: v for axis, value in zip(kernels, point) for f, v in axis.setting(value).items()}
