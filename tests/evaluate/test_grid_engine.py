"""Grid = engine for `hybrid` on a real Qdrant Edge build where sparse scores tie (equal-length
chunks sharing the query's term): Qdrant positions tied leg scores its own way and its top-p is not
a prefix of its top-P, so the grid fuses the engine's own top-p lists. Weight 0 included: the
0-weight leg's items stay candidates (score 0) in the grid, ``fusion`` and ``hybrid`` alike."""

from __future__ import annotations

import pytest

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.ablation.grid import Config, GridSpec, compute_grid
from rag_lab.evaluate.ablation.legs import LegRetriever
from rag_lab.evaluate.ablation.grid import Candidates
from rag_lab.evaluate.ablation.spot_check import axis_value, check_points, checked_axes, spot_check
from rag_lab.index import CorpusIndex, build_index
from rag_lab.retrieve.fusion import FusionRetriever
from rag_lab.retrieve.hybrid import HybridRetriever

WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heath", "inlet", "jetty", "knoll", "larch"]
QUERIES = {"q1": "copay fee schedule", "q2": "fee waiver for the grove", "q3": "inlet jetty fee"}
SPEC = GridSpec(modes=("fusion", "hybrid"), fusion_k=(1, 60), prefetch=(3, 12), top_k=(8,),
                weights=((1.0, 1.0), (0.0, 1.0), (1.0, 0.0), (0.7, 1.3)), max_per_doc=(0, 1), default_prefetch=12)


def _corpus(folder):
    """40 one-chunk documents of exactly eight words; "fee" once in most: their sparse scores tie."""
    folder.mkdir(parents=True)
    for n in range(40):
        words = [WORDS[(n + m) % len(WORDS)] + str(m) for m in range(7)]
        words.insert(n % 7, "fee" if n % 5 else "levy")
        (folder / f"doc{n:03d}.txt").write_text(" ".join(words) + ".", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def tied_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("tied")
    dataset = resolve_dataset(_corpus(root / "corpus"))
    settings = load_settings(data_dir=root / "lab", vector_backend="edge")
    build_index(dataset, settings, progress=False)
    return CorpusIndex.open(dataset, settings)


@pytest.fixture(scope="module")
def grid_run(tied_index):
    legs = LegRetriever(tied_index, ["dense", "bm25", "sparse"], SPEC.depth, SPEC.prefetch)
    questions = [Candidates(qid, legs(text)[0]) for qid, text in QUERIES.items()]
    return questions, compute_grid(questions, SPEC)


def _live(index, config: Config, query: str, **extra) -> list[str]:
    cls = HybridRetriever if config.mode == "hybrid" else FusionRetriever
    retriever = cls(index, top_k=config.top_k, prefetch=config.prefetch, fusion_k=config.k, dense_weight=config.dense_weight,
                    sparse_weight=config.sparse_weight, max_per_doc=config.max_per_doc, **extra)
    return [r.node.node_id for r in retriever.retrieve(query)]


def test_the_engines_top_p_is_not_a_prefix_of_its_top_P_where_scores_tie(grid_run):
    """Why the grid needs the engine's own lists: cutting the deep list would fuse other points."""
    questions, _ = grid_run
    differs = 0
    for q in questions:
        deep = [c for c, _, _ in q.legs["sparse"]]
        for p in SPEC.prefetch:
            engine = [c for c, _, _ in q.legs[f"sparse@{p}"]]
            assert len(engine) == min(p, len(deep))
            differs += engine != deep[:p]
    assert differs > 0, "the corpus must produce tied sparse scores for this test to mean anything"


@pytest.mark.parametrize("mode", ["hybrid", "fusion"])
def test_every_grid_configuration_equals_the_live_retriever(tied_index, grid_run, mode):
    """Every k, prefetch, weight pair (0 included), cap and top-k, for every question."""
    _, grid = grid_run
    for config in (c for c in grid.configs if c.mode == mode):
        for qid, text in QUERIES.items():
            assert _live(tied_index, config, text) == list(grid.chunks[config.id][qid]), (config.id, qid)


def test_explained_hybrid_equals_plain_hybrid_on_tied_legs(tied_index, grid_run):
    _, grid = grid_run
    for config in (c for c in grid.configs if c.mode == "hybrid" and c.k == 60 and not c.max_per_doc):
        for text in QUERIES.values():
            assert _live(tied_index, config, text, explain=True) == _live(tied_index, config, text), config.id


def test_a_zero_weight_leg_keeps_its_items_as_zero_score_candidates(tied_index, grid_run):
    _, grid = grid_run
    for mode in ("fusion", "hybrid"):
        config = Config(mode, 60, 3, 0.0, 1.0, 8)
        retriever = (HybridRetriever if mode == "hybrid" else FusionRetriever)(
            tied_index, top_k=8, prefetch=3, fusion_k=60, dense_weight=0.0, sparse_weight=1.0)
        results = retriever.retrieve(QUERIES["q1"])
        scores = [r.score for r in results]
        positive = sum(s > 0 for s in scores)
        # the sparse leg's ≤ 3 hits, then the 0-weight dense leg's others at 0 (the old grid stopped at the first)
        assert positive <= 3 < len(scores) and scores[positive:] == [0.0] * (len(scores) - positive), mode
        assert [r.node.node_id for r in results] == list(grid.chunks[config.id]["q1"]), mode


def test_the_spot_check_covers_every_axis_value_and_passes(tied_index, grid_run):
    questions, grid = grid_run
    check = spot_check(tied_index, questions, QUERIES, grid, SPEC, n_questions=2)
    assert check["equal"] and check["unconfirmed"] == {}, [c for c in check["checks"] if not c["equal"]]
    for mode in SPEC.modes:
        covered = {(axis, value) for c in check["checks"] if c["mode"] == mode for axis, value in c["axes"]}
        expected = {(axis, axis_value(config, axis)) for config in SPEC.configs() if config.mode == mode
                    for axis in checked_axes()}
        assert covered == expected, mode
        assert ("weights", "0:1") in covered and ("weights", "1:0") in covered
    # 2 questions per checked configuration, rotated over the questions
    per_mode = len(check_points(SPEC, "hybrid"))
    assert len(check["checks"]) == 2 * 2 * per_mode
    assert len({c["qid"] for c in check["checks"]}) == len(QUERIES)
