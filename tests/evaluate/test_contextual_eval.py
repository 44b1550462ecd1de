"""Plain vs contextual on the real texas_childcare index: the ablation axis (`rag-lab ablate
--contextual none,annotations`) and the notebook's comparison (hit@k, MRR, CIs, significance)."""

from __future__ import annotations

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.ablation.contextual import CONTEXTUAL_FILE, parse_variants, run_contextual_ablation
from rag_lab.evaluate.ablation.grid import GridSpec
from rag_lab.evaluate.retrieval.contextual import compare_contextual, cost_frame
from rag_lab.index import CorpusIndex

SPEC = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(20,), top_k=(3, 5), default_prefetch=20)


@pytest.fixture(scope="module")
def texas(texas_index, lab_settings):
    return resolve_dataset("texas_childcare", lab_settings.datasets_dir)


def test_contextual_is_an_ablation_axis(texas, lab_settings, tmp_path):
    result = run_contextual_ablation(texas, lab_settings, SPEC, tmp_path / "abl", ("none", "annotations"), limit=12,
                                     progress=False, echo=lambda _: None)
    assert set(result.runs) == {"none", "annotations"}
    assert result.runs["annotations"].manifest["contextual"] == "annotations"
    assert (result.runs["none"].manifest["index_fingerprint"]
            != result.runs["annotations"].manifest["index_fingerprint"])
    axis = result.axis
    assert set(axis["contextual"]) == {"none", "annotations"} and set(axis["baseline"]) == {"none"}
    assert set(axis["config"]) == {"fusion|k=60|p=20|w=1:1|top=3", "fusion|k=60|p=20|w=1:1|top=5"}
    ctx = axis[axis["contextual"] == "annotations"]
    assert ctx["delta"].notna().all() and ctx["p_student_holm"].between(0, 1).all()
    assert (axis["ci_low"] <= axis["mean"]).all() and (axis["mean"] <= axis["ci_high"]).all()
    assert (tmp_path / "abl" / CONTEXTUAL_FILE).exists() and (tmp_path / "abl" / "annotations" / "results.csv").exists()
    # the deltas are the difference of the two variants' means
    row = ctx.iloc[0]
    base = axis[(axis["contextual"] == "none") & (axis["config"] == row["config"]) & (axis["metric"] == row["metric"])]
    assert row["delta"] == pytest.approx(row["mean"] - base["mean"].iloc[0])


def test_parse_variants():
    assert parse_variants("none, annotations,none") == ("none", "annotations")
    with pytest.raises(Exception, match="Unknown contextual variant"):
        parse_variants("none,fancy")


def test_notebook_comparison_plain_vs_annotations(texas, lab_settings):
    result = compare_contextual(texas, lab_settings, "annotations", ["dense", "bm25"], k=5, progress=False,
                                n_resamples=300, limit=12)
    n = 12
    assert result.n_queries == n
    table = result.table
    assert list(table["mode"]) == ["dense", "dense", "bm25", "bm25"]
    assert set(table["metric"]) == {"hit_rate@5", "mrr"} and (table["n"] == n).all()
    for name in ("plain", "annotations"):
        assert (table[f"{name}_low"] <= table[name]).all() and (table[name] <= table[f"{name}_high"]).all()
        assert table[name].between(0, 1).all()
    assert (table["delta"] == table["annotations"] - table["plain"]).all()
    assert table["p_holm"].between(0, 1).all() and (table["p_holm"] >= table["p_value"]).all()
    cost = cost_frame(result)
    assert cost.loc[0, "llm_calls"] == 0 and cost.loc[0, "annotated"] == CorpusIndex.open(
        texas, lab_settings, "annotations").manifest.n_chunks
    with pytest.raises(ValueError):
        compare_contextual(texas, lab_settings, "none")
