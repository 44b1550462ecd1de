"""`make demo` shows the recommended configuration's settings beside the default and the numbers tune confirmed."""

from __future__ import annotations

from rag_lab.cli.demo import RECOMMENDED, recommended_summary
from rag_lab.retrieve.tuned_config import TunedConfig, write_tuned_config


def test_the_summary_shows_both_settings_and_the_confirmed_numbers(tmp_path):
    assert recommended_summary(str(tmp_path / "missing.toml")) is None
    path = write_tuned_config(tmp_path / "r.toml", TunedConfig(
        "hybrid", 5, 25, 1.0, 1.0, 1, 5, provenance={"dataset": "texas_childcare_full", "metric": "chunk_hit@5",
                                                      "chosen_on": "dev (78 questions)", "dev_mean": 0.9359,
                                                      "rest_mean": 0.9241, "rest_default_mean": 0.7975,
                                                      "rest_p_student": 1.22e-05}))
    lines = recommended_summary(str(path)).splitlines()
    assert "rag-lab tune texas_childcare_full" in lines[0]
    assert lines[1].strip() == "recommended: hybrid fusion_k 5 prefetch 25 weights 1:1 max_per_doc 1 top_k 5"
    assert lines[2].strip() == "default    : hybrid fusion_k 60 prefetch 100 weights 1:1 max_per_doc 0 (no cap) top_k 30 top_n 7"
    assert "0.9241 vs the default's 0.7975" in lines[3] and "p = 1.2e-05" in lines[3]
    # the shipped file: the demo's default --config, with its provenance
    shipped = recommended_summary(str(RECOMMENDED))
    assert shipped is not None and "confirmed on the rest split" in shipped


def test_an_unconfirmed_pick_is_shown_as_the_default_kept(tmp_path):
    path = write_tuned_config(tmp_path / "r.toml", TunedConfig(
        "hybrid", 60, 100, 1.0, 1.0, 0, 10, provenance={"dataset": "scifact", "metric": "ndcg@10", "adopted": False,
                                                        "dev_pick": "hybrid|k=60|p=10|w=1:1|top=10",
                                                        "rest_pick_mean": 0.7097, "rest_default_mean": 0.7095}))
    lines = recommended_summary(str(path)).splitlines()
    assert "the default kept" in lines[3] and "hybrid|k=60|p=10" in lines[3] and "0.7097 vs 0.7095" in lines[3]
