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
document (:func:`rag_lab.retrieve.diversity.cap_per_document`, the function the retrievers use) is
applied to the whole fused list before the top-k cut.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rag_lab.fusion.rrf import DEFAULT_RRF_K, rrf_terms
from rag_lab.retrieve.diversity import cap_per_document, check_max_per_doc

# The mode → (dense leg, sparse leg) each fused mode fuses.
MODE_LEGS = {"fusion": ("dense", "bm25"), "hybrid": ("dense", "sparse")}
GRID_MODES = tuple(MODE_LEGS)


@dataclass(frozen=True)
class GridSpec:
    modes: tuple[str, ...] = ("fusion", "hybrid")
    fusion_k: tuple[int, ...] = (1, 2, 5, 10, 20, 60, 100)
    prefetch: tuple[int, ...] = (10, 25, 50, 100)
    top_k: tuple[int, ...] = (3, 5, 7, 10)
    weights: tuple[tuple[float, float], ...] = ((1.0, 1.0),)
    max_per_doc: tuple[int, ...] = (0,)  # chunks per document in the top-k; 0 = no cap
    default_k: int = DEFAULT_RRF_K
    default_prefetch: int = 100

    def __post_init__(self) -> None:
        for name in ("modes", "fusion_k", "prefetch", "top_k", "weights", "max_per_doc"):
            if not getattr(self, name):
                raise ValueError(f"the ablation grid needs at least one value of {name}")
        unknown = [m for m in self.modes if m not in MODE_LEGS]
        if unknown:
            raise ValueError(f"ablation modes must be among {', '.join(GRID_MODES)}, got {', '.join(unknown)}")
        for name in ("prefetch", "top_k"):
            bad = [v for v in getattr(self, name) if not isinstance(v, int) or v < 1]
            if bad:
                raise ValueError(f"{name} values must be whole numbers ≥ 1, got {bad}")
        for cap in self.max_per_doc:
            check_max_per_doc(cap)  # the retrievers' own rule
        if any(k < 0 for k in self.fusion_k):
            raise ValueError(f"fusion k values must be ≥ 0, got {list(self.fusion_k)}")
        if any(wd <= 0 and ws <= 0 for wd, ws in self.weights):
            raise ValueError("at least one leg weight must be > 0 in every weight pair")

    @property
    def depth(self) -> int:
        """How deep each leg is retrieved (once): the largest prefetch."""
        return max(self.prefetch)

    @property
    def baseline_k(self) -> int:
        return self.default_k if self.default_k in self.fusion_k else self.fusion_k[-1]

    @property
    def baseline_prefetch(self) -> int:
        return self.default_prefetch if self.default_prefetch in self.prefetch else self.depth

    @property
    def baseline_weights(self) -> tuple[float, float]:
        """Equal weights when the grid has them, else its first pair."""
        return (1.0, 1.0) if (1.0, 1.0) in self.weights else self.weights[0]

    @property
    def baseline_max_per_doc(self) -> int:
        """No cap when the grid has it, else its first value."""
        return 0 if 0 in self.max_per_doc else self.max_per_doc[0]

    def baseline(self, mode: str, top_k: int) -> "Config":
        """``mode`` at the default k, prefetch, weights and cap, at ``top_k``."""
        return Config(mode, self.baseline_k, self.baseline_prefetch, *self.baseline_weights, top_k,
                      self.baseline_max_per_doc)

    def configs(self) -> list["Config"]:
        return [Config(mode, k, p, wd, ws, t, m) for mode in self.modes
                for k, p, (wd, ws), m, t in itertools.product(self.fusion_k, self.prefetch, self.weights,
                                                              self.max_per_doc, self.top_k)]

    def to_dict(self) -> dict:
        return {"modes": list(self.modes), "fusion_k": list(self.fusion_k), "prefetch": list(self.prefetch),
                "top_k": list(self.top_k), "weights": [list(w) for w in self.weights],
                "max_per_doc": list(self.max_per_doc),
                "default_k": self.default_k, "default_prefetch": self.default_prefetch}


@dataclass(frozen=True)
class Config:
    mode: str
    k: int
    prefetch: int
    dense_weight: float
    sparse_weight: float
    top_k: int
    max_per_doc: int = 0  # 0 = no cap

    @property
    def id(self) -> str:
        # "|cap=M" only when capped: uncapped ids stay those of earlier runs (answer caches, config ids)
        return (f"{self.mode}|k={self.k}|p={self.prefetch}|w={self.dense_weight:g}:{self.sparse_weight:g}"
                f"|top={self.top_k}" + (f"|cap={self.max_per_doc}" if self.max_per_doc else ""))

    def to_dict(self) -> dict:
        return {"config": self.id, "mode": self.mode, "k": self.k, "prefetch": self.prefetch,
                "dense_weight": self.dense_weight, "sparse_weight": self.sparse_weight, "top_k": self.top_k,
                "max_per_doc": self.max_per_doc}


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
    capped = any(spec.max_per_doc)
    for mode in spec.modes:
        dense, sparse = MODE_LEGS[mode]
        order, doc_of, dense_ranks, sparse_ranks = _rank_matrix(questions, dense, sparse, spec.prefetch,
                                                                engine_lists=mode == "hybrid")
        # a cap refills the top-k from further down: it needs the whole fused list
        depth = dense_ranks.shape[-1] if capped else max_top
        ranked, count = fused_order(dense_ranks, sparse_ranks, spec.fusion_k, spec.prefetch, spec.weights, depth)
        for qi, q in enumerate(questions):
            ids = order[qi]
            for (ki, k), (pi, p), (wi, (wd, ws)) in itertools.product(
                    enumerate(spec.fusion_k), enumerate(spec.prefetch), enumerate(spec.weights)):
                n = int(count[qi, pi])
                fused = [ids[c] for c in ranked[qi, ki, pi, wi, : min(n, depth)]]
                for cap in spec.max_per_doc:
                    kept, _ = cap_per_document(fused, doc_of.__getitem__, cap, max_top)
                    best = [chunk for _, chunk in kept]
                    for top in spec.top_k:
                        chunks = tuple(best[:top])
                        cid = Config(mode, k, p, wd, ws, top, cap).id
                        result.chunks[cid][q.qid] = chunks
                        result.docs[cid][q.qid] = tuple(dict.fromkeys(doc_of[c] for c in chunks))
    return result
