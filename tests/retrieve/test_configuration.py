"""One retrieval configuration type: every lever's default written once, the ids and texts derived
from it pinned, and a new axis added in the one place reaching the grid, the spot check, the
significance families, tune's cost order, grid files and the CLI."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from rag_lab.evaluate.ablation.grid import Candidates, Config, GridSpec, compute_grid
from rag_lab.retrieve import configuration
from rag_lab.retrieve.configuration import DEFAULTS, Axis, RetrievalConfig, fused_defaults


# -- defaults written once --------------------------------------------------------------------------

def test_the_lab_defaults():
    assert (DEFAULTS.mode, DEFAULTS.fusion_k, DEFAULTS.prefetch, DEFAULTS.dense_weight, DEFAULTS.sparse_weight,
            DEFAULTS.max_per_doc, DEFAULTS.top_k, DEFAULTS.top_n, DEFAULTS.num_queries, DEFAULTS.year_boost,
            DEFAULTS.contextual) == ("hybrid", 60, 100, 1.0, 1.0, 0, 5, None, 1, None, "none")
    # ir's checkpoint key holds them as JSON: the same text as before, so its checkpoints stay valid
    assert json.dumps(fused_defaults()) == '{"fusion_k": 60, "prefetch": 100, "dense_weight": 1.0, ' \
                                           '"sparse_weight": 1.0, "max_per_doc": 0}'


def test_every_place_reads_the_one_default():
    from rag_lab.evaluate.tune.run import default_config
    from rag_lab.retrieve.fusion import FusionRetriever
    from rag_lab.retrieve.hybrid import HybridRetriever
    from rag_lab.retrieve.base import LabRetriever
    from rag_lab.retrieve.configuration import flag_levers
    from rag_lab.retrieve.registry import _fused
    from rag_lab.retrieve.tuned_config import TunedConfig

    for cls in (FusionRetriever, HybridRetriever):  # the levers come as the one configuration object
        assert "config" in inspect.signature(cls).parameters
        assert not {"rrf_k", "prefetch", "top_k", "max_per_doc"} & set(inspect.signature(cls).parameters)
    assert inspect.signature(LabRetriever).parameters["top_k"].default == DEFAULTS.top_k  # one top-k default
    assert "config" in inspect.signature(_fused).parameters
    tuned = TunedConfig()
    assert isinstance(tuned, RetrievalConfig)
    assert {f.name: getattr(tuned, f.name) for f in dataclasses.fields(RetrievalConfig)} == dataclasses.asdict(DEFAULTS)
    spec = GridSpec()
    assert (spec.default_k, spec.default_prefetch) == (DEFAULTS.fusion_k, DEFAULTS.prefetch)
    assert default_config(spec, "hybrid", "chunk_hit@5").id == "hybrid|k=60|p=100|w=1:1|top=7"
    assert flag_levers() == ("fusion_k", "prefetch", "dense_weight", "sparse_weight", "max_per_doc", "year_boost")
    from rag_lab.evaluate.tune.run import TUNE_SPEC

    # tune's grid is the lever table's tune values, as the command's help states them
    assert (TUNE_SPEC.weights, TUNE_SPEC.max_per_doc) == (configuration.axis("weights").tune_values,
                                                          configuration.axis("max_per_doc").tune_values)
    assert configuration.tune_grid() == {"weights": ((1.0, 1.0), (0.7, 1.3), (1.3, 0.7)), "max_per_doc": (0, 1, 2)}


def test_a_changed_default_reaches_the_grid_baseline_and_the_ir_key(monkeypatch):
    monkeypatch.setattr(configuration, "DEFAULTS", dataclasses.replace(DEFAULTS, prefetch=50))
    assert fused_defaults()["prefetch"] == 50
    assert GridSpec().baseline("fusion", 5).id == "fusion|k=60|p=50|w=1:1|top=5"


# -- ids and texts derived from the table, pinned ---------------------------------------------------

def test_configuration_ids_and_columns_are_those_of_earlier_runs():
    assert Config("hybrid", 60, 100, 1.0, 1.0, 7, 1).id == "hybrid|k=60|p=100|w=1:1|top=7|cap=1"
    assert Config("hybrid", 60, 100, 1.0, 1.0, 7).id == "hybrid|k=60|p=100|w=1:1|top=7"
    assert Config("fusion", 5, 25, 0.7, 1.3, 3, 0).id == "fusion|k=5|p=25|w=0.7:1.3|top=3"
    assert list(Config("fusion", 5, 25, 0.7, 1.3, 3, 2).to_dict()) == [
        "config", "mode", "k", "prefetch", "dense_weight", "sparse_weight", "top_k", "max_per_doc"]


def test_the_default_grid_and_its_record():
    spec = GridSpec()
    assert spec.to_dict() == {"modes": ["fusion", "hybrid"], "fusion_k": [1, 2, 5, 10, 20, 60, 100],
                              "prefetch": [10, 25, 50, 100], "top_k": [3, 5, 7, 10], "weights": [[1.0, 1.0]],
                              "max_per_doc": [0], "default_k": 60, "default_prefetch": 100}
    configs = spec.configs()
    assert len(configs) == 2 * 7 * 4 * 4
    assert [c.id for c in configs[:2]] == ["fusion|k=1|p=10|w=1:1|top=3", "fusion|k=1|p=10|w=1:1|top=5"]
    assert spec.baseline_text() == "k=60 prefetch=100 weights=1:1 max_per_doc=0"
    other = GridSpec(fusion_k=(1, 10), prefetch=(10, 25), weights=((0.7, 1.3), (1.3, 0.7)), max_per_doc=(2, 1))
    assert other.baseline("hybrid", 3).id == "hybrid|k=10|p=25|w=0.7:1.3|top=3|cap=2"  # last k, deepest p, first


def test_texts_derived_from_the_table():
    from rag_lab.evaluate.ablation.significance import family_questions, one_setting_axes
    from rag_lab.evaluate.ablation.spot_check import checked_axes, spot_check_lines, unconfirmed_text
    from rag_lab.evaluate.tune.select import cost_order

    assert cost_order() == ("LLM query rewrites (num_queries)", "top-k (generator context)",
                            "prefetch (candidates per leg)", "settings moved from the default (k, weights, cap)",
                            "mode (fusion before hybrid)")
    assert list(family_questions()) == ["k", "prefetch", "weights", "max_per_doc", "mode", "interactions"]
    assert family_questions()["prefetch"] == ("does the prefetch depth matter? each prefetch against the default, at "
                                              "the default k and weights")
    assert one_setting_axes() == ("k", "prefetch", "weights", "max_per_doc", "mode")
    assert checked_axes() == ["k", "prefetch", "weights", "max_per_doc", "top_k"]
    assert unconfirmed_text({"hybrid": {"prefetch": ["10", "25"], "max_per_doc": ["2"]}}) == (
        "hybrid prefetch 10 25, max-per-doc 2")
    check = {"equal": True, "checks": [{"equal": True}] * 4, "modes": ["fusion"], "axes_checked": checked_axes(),
             "questions_per_value": 3}
    assert spot_check_lines(check, "d") == [
        "spot check (fusion; 4 live queries: every RRF k, prefetch, weight pair, cap and top-k of the grid, 3 "
        "questions each): live rankings equal the grid's"]


# -- a new axis: one field plus its kernel, in the one place ---------------------------------------

def _promote(ranked, n, document_of, depth):
    """A toy kernel: the result at rank ``n + 1`` moves to the top (0: unchanged)."""
    ranked = list(ranked)
    return [ranked[n], *ranked[:n], *ranked[n + 1:]] if 0 < n < len(ranked) else ranked


PROMOTE = Axis("promote", "promote", ("promote",), "promote", (0,), "does promoting a lower result matter?",
               "promotion", "promote", "promote", "the rank below the top moved to the top",
               token_at_default=False, kernel=_promote, default=0)


@pytest.fixture
def promote_axis(monkeypatch):
    """The lever table with the toy axis added (monkeypatch restores it)."""
    monkeypatch.setattr(configuration, "AXES", (*configuration.AXES, PROMOTE))
    return PROMOTE


def _legs(ids: list[str]) -> list[tuple[str, str, float]]:
    return [(chunk, chunk.split("#")[0], 1.0 / rank) for rank, chunk in enumerate(ids, start=1)]


QUESTION = Candidates("q", {"dense": _legs(["a#1", "b#1", "c#1", "d#1"]),
                            "bm25": _legs(["b#1", "a#1", "e#1", "c#1"])})


def test_the_grid_picks_a_new_axis_up(promote_axis):
    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(4,), top_k=(2, 3), promote=(0, 1))
    ids = [c.id for c in spec.configs()]
    assert ids == ["fusion|k=60|p=4|w=1:1|top=2", "fusion|k=60|p=4|w=1:1|top=2|promote=1",
                   "fusion|k=60|p=4|w=1:1|top=3", "fusion|k=60|p=4|w=1:1|top=3|promote=1"]
    assert spec.to_dict()["promote"] == [0, 1]
    grid = compute_grid([QUESTION], spec)
    plain = grid.chunks["fusion|k=60|p=4|w=1:1|top=3"]["q"]
    assert grid.chunks["fusion|k=60|p=4|w=1:1|top=2|promote=1"]["q"] == (plain[1], plain[0])
    # tune's fusion of a question with its rewrites applies the same kernels
    from rag_lab.evaluate.tune.query_gen import fuse_queries

    promoted = next(c for c in grid.configs if c.id == "fusion|k=60|p=4|w=1:1|top=2|promote=1")
    doc_of = {chunk: doc for leg in QUESTION.legs.values() for chunk, doc, _ in leg}
    assert fuse_queries([QUESTION], promoted, doc_of) == (plain[1], plain[0])
    # a configuration at the axis's default is the one of earlier runs
    assert Config.of("fusion", {"k": 60, "prefetch": 4, "dense_weight": 1.0, "sparse_weight": 1.0, "top_k": 3,
                                "promote": 0}) == Config("fusion", 60, 4, 1.0, 1.0, 3)


def test_the_spot_check_families_and_cost_order_pick_a_new_axis_up(promote_axis):
    from rag_lab.evaluate.ablation.significance import comparison_for, family_questions
    from rag_lab.evaluate.ablation.spot_check import check_points
    from rag_lab.evaluate.tune.select import moved_settings

    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(4,), top_k=(3,), promote=(0, 2))
    points = {axis_value for _, stands_for in check_points(spec, "fusion") for axis_value in stands_for}
    assert ("promote", "2") in points and ("promote", "0") in points
    moved = next(c for c in spec.configs() if c.value("promote") == 2)
    assert comparison_for(moved, spec) == ("promote", "fusion|k=60|p=4|w=1:1|top=3")
    assert family_questions()["promote"] == "does promoting a lower result matter?"
    assert moved_settings(moved, spec.baseline("fusion", 3)) == 1
    assert fused_defaults()["promote"] == 0


def test_grid_files_and_the_cli_pick_a_new_axis_up(promote_axis, tmp_path):
    from rag_lab.cli.ablate import grid_from_args
    from rag_lab.cli.main import build_parser
    from rag_lab.evaluate.ablation.grid_file import grid_spec

    path = tmp_path / "grid.yaml"
    path.write_text("modes: [fusion]\npromote: [0, 3]\n", encoding="utf-8")
    assert grid_spec(path).promote == (0, 3)
    args = build_parser().parse_args(["ablate", "texas_childcare", "--promote", "0,1"])
    assert grid_from_args(args).promote == (0, 1)


# -- the fused levers' values, checked by every entry point alike -------------------------------------

@pytest.mark.parametrize(("dense", "sparse", "message"), [
    (0, 0, "at least one leg weight must be > 0"), (-1, 1, "leg weights must be numbers ≥ 0"),
    (1, -0.5, "leg weights must be numbers ≥ 0"), ("1", 1, "leg weights must be numbers ≥ 0")])
def test_leg_weights_that_rank_nothing_or_upside_down_are_refused(dense, sparse, message):
    with pytest.raises(ValueError, match=message):
        configuration.check_leg_weights(dense, sparse)
    with pytest.raises(ValueError, match=message):  # the grid's pairs: the same rule
        configuration.check_weights([(1.0, 1.0), (dense, sparse)])


def test_one_leg_may_be_switched_off_and_fusion_k_must_be_a_number():
    assert configuration.check_leg_weights(0, 2) == (0.0, 2.0)
    assert configuration.check_fusion_k(0) == 0
    for bad in (-1, "abc", None, True):
        with pytest.raises(ValueError, match="fusion k"):
            configuration.check_fusion_k(bad)


@pytest.mark.parametrize("mode", ["fusion", "hybrid"])
def test_the_fused_retrievers_refuse_zero_weights_before_searching(texas_index, mode):
    from rag_lab.retrieve.fusion import FusionRetriever
    from rag_lab.retrieve.hybrid import HybridRetriever

    retriever = {"fusion": FusionRetriever, "hybrid": HybridRetriever}[mode]
    with pytest.raises(ValueError, match="at least one leg weight must be > 0"):
        retriever(texas_index, dense_weight=0.0, sparse_weight=0.0)
    with pytest.raises(ValueError, match="fusion k"):
        retriever(texas_index, fusion_k="abc")
    with pytest.raises(TypeError, match="'rrf_k' is now called 'fusion_k'"):
        retriever(texas_index, rrf_k=5)
    assert retriever(texas_index, top_k=3, dense_weight=0.0).retrieve("income limit")  # one leg off: still ranks


def test_a_fused_lever_given_to_a_mode_without_it_is_named_not_dropped_silently(lab_settings, texas_index):
    import warnings

    from rag_lab.errors import RagLabWarning
    from rag_lab.retrieve.registry import build_retriever

    with pytest.warns(RagLabWarning, match="bm25 takes no fusion_k, max_per_doc: ignored"):
        bm25 = build_retriever("bm25", lab_settings, "texas_childcare", top_k=3, fusion_k=5, max_per_doc=1)
    assert bm25.top_k == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", RagLabWarning)
        fused = build_retriever("fusion", lab_settings, "texas_childcare", top_k=3, fusion_k=5)
        assert (fused.config.top_k, fused.config.fusion_k) == (3, 5)
        build_retriever("bm25", lab_settings, "texas_childcare", top_k=3, explain=True, fusion_k=None)
    with pytest.raises(TypeError, match="'rrf_k' is now called 'fusion_k'"):
        build_retriever("fusion", lab_settings, "texas_childcare", rrf_k=5)
