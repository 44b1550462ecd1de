"""`rag-lab compare` on run folders written the way `eval` writes them: pairing, the policy's marks,
what changed, flips, the regression gate and bad input."""

from __future__ import annotations

import json

import pytest

from rag_lab.errors import ConfigError, DatasetError
from rag_lab.evaluate.compare import compare_runs
from tests.evaluate.compare.builders import manifest, scores, write_run

N = 24


def worse(i: int) -> float:  # B is 0.3 lower on every question: a regression any test sees
    return 0.5 + 0.01 * (i % 5)


def base(i: int) -> float:
    return 0.8 + 0.01 * (i % 5)


@pytest.fixture
def runs(tmp_path):
    a = write_run(tmp_path / "a", scores(N, base))
    b = write_run(tmp_path / "b", scores(N, worse), manifest(**{"config.params": {"top_k": 1}}))
    return a, b


def test_a_run_against_itself_is_no_change(runs):
    a, _ = runs
    result = compare_runs(a, a)
    assert result.changes == []
    assert not result.table["significant"].any()
    assert (result.table["delta"] == 0).all() and set(result.table["decided_by"]) == {"identical"}
    assert result.verdict().startswith("B does not differ from A in set-up; no significant difference")
    assert result.family == 4  # 2 modes × 2 metrics, one Holm family


def test_a_worse_run_is_named_by_its_lever_and_marked(runs):
    a, b = runs
    result = compare_runs(a, b)
    assert [c.label for c in result.changes] == ["retrieval configuration"]
    assert result.changes[0].fields == (("config.params.top_k", None, 1),)
    row = result.table.set_index(["mode", "metric"]).loc[("hybrid", "ndcg@10")]
    assert row["delta"] == pytest.approx(-0.3) and row["ci_high"] < 0 and row["significant"]
    assert row["mean_a"] == pytest.approx(sum(base(i) for i in range(N)) / N)
    verdict = result.verdict()
    assert verdict.startswith("B differs from A in: retrieval configuration (config.params.top_k: — → 1); "
                              "bm25 ndcg@10 -0.300 [-0.300, -0.300], "
                              "significant (p <0.001, n 24); hybrid ndcg@10 -0.300")
    assert "rouge_l" in verdict  # four rows at most, the flip metric's first


def test_only_part_of_a_family_is_significant_after_holm(tmp_path):
    """One small, noisy difference among strong ones: Holm over every row printed, as `ablate`."""
    a = write_run(tmp_path / "a", scores(12, base, metrics=("ndcg@10",)))
    values = scores(12, worse, metrics=("ndcg@10",))
    values["bm25"]["ndcg@10"] = {f"q{i}": base(i) + (0.01 if i == 0 else 0.0) for i in range(12)}
    b = write_run(tmp_path / "b", values)
    table = compare_runs(a, b).table.set_index("mode")
    assert table.loc["hybrid", "significant"] and not table.loc["bm25", "significant"]
    assert table.loc["bm25", "p_adjusted"] >= table.loc["bm25", "p_value"]


def test_different_question_sets_are_refused_naming_the_counts_unless_intersect(tmp_path):
    a = write_run(tmp_path / "a", scores(10, base))
    b = write_run(tmp_path / "b", scores(12, base))
    with pytest.raises(ConfigError, match=r"A 10 \(0 not in B\), B 12 \(2 not in A\), 10 shared"):
        compare_runs(a, b)
    result = compare_runs(a, b, intersect=True)
    assert len(result.pairing.ids) == 10 and result.pairing.dropped == 2
    assert "--intersect dropped 2" in result.verdict()


def test_runs_of_two_datasets_are_refused_unless_they_share_ids(tmp_path):
    a = write_run(tmp_path / "a", scores(6, base))
    b = write_run(tmp_path / "b", scores(6, base), manifest(**{"dataset.name": "scifact"}))
    with pytest.raises(ConfigError, match="two datasets"):
        compare_runs(a, b)
    assert len(compare_runs(a, b, intersect=True).pairing.ids) == 6
    other = {m: {k: {f"x{q}": v for q, v in values.items()} for k, values in ms.items()}
             for m, ms in scores(6, base).items()}
    c = write_run(tmp_path / "c", other, manifest(**{"dataset.name": "scifact"}))
    with pytest.raises(ConfigError, match="share no question id"):
        compare_runs(a, c, intersect=True)


def test_a_changed_judge_leaves_judged_metrics_uncompared_unless_allowed(tmp_path):
    metrics = ("ndcg@10", "faithfulness")
    a = write_run(tmp_path / "a", scores(8, base, metrics=metrics), manifest(**{"config.judge": "local:qwen+v1"}))
    b = write_run(tmp_path / "b", scores(8, worse, metrics=metrics), manifest(**{"config.judge": "openai:gpt-5-mini"}))
    result = compare_runs(a, b)
    judged = result.table[result.table["metric"] == "faithfulness"]
    assert judged["p_value"].isna().all() and judged["note"].str.contains("the judge differs").all()
    assert result.family == 2 and "judge" in result.changed_text()
    assert any("judged metrics are not compared" in n for n in result.notes())
    allowed = compare_runs(a, b, allow_judge_change=True)
    assert allowed.table["p_value"].notna().all() and allowed.family == 4


def test_flips_hold_both_answers_and_both_top_sources(tmp_path):
    a = write_run(tmp_path / "a", scores(4, lambda i: 0.5), answers={"q1": "old answer"})
    values = scores(4, lambda i: 0.5)
    values["hybrid"]["ndcg@10"].update(q1=1.0, q2=0.2)
    b = write_run(tmp_path / "b", values, answers={"q1": "new answer"})
    result = compare_runs(a, b)
    assert result.flip_metric == "ndcg@10"
    assert [(f.question_id, round(f.delta, 3)) for f in result.better] == [("q1", 0.5)]
    assert [(f.question_id, round(f.delta, 3)) for f in result.worse] == [("q2", -0.3)]
    flip = result.better[0]
    assert (flip.a.answer, flip.b.answer) == ("old answer", "new answer")
    assert flip.a.top_source == "hybrid-q1.pdf p. 2" and flip.b.top_text == "text of hybrid-q1.pdf"
    data = json.loads(json.dumps(result.to_json()))
    assert data["flips"]["better"][0]["b"]["answer"] == "new answer"
    assert compare_runs(a, b, flip_metric="rouge_l").better == []


def test_a_metric_neither_run_has_lists_the_available_ones(runs):
    a, b = runs
    with pytest.raises(ConfigError, match=r"(?s)metric mrr@5 is in neither run.*choose from (rouge_l, ndcg@10|ndcg@10, rouge_l)"):
        compare_runs(a, b, metrics=["mrr@5"])


def test_not_a_run_folder_and_a_damaged_samples_line_are_named(runs, tmp_path):
    a, b = runs
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="empty is not a run folder .no manifest.json."):
        compare_runs(tmp_path / "empty", b)
    samples = b / "hybrid" / "samples.jsonl"
    lines = samples.read_text().splitlines(keepends=True)
    lines[2] = "{not json\n"
    samples.write_text("".join(lines))
    with pytest.raises(DatasetError, match=r"hybrid/samples.jsonl: line 3 is not JSON"):
        compare_runs(a, b)


def test_a_run_being_written_is_refused_naming_its_lock(runs):
    from rag_lab.evaluate.store.run_lock import run_lock

    a, b = runs
    with run_lock(b):
        with pytest.raises(ConfigError, match=r"still being written: .*b/\.lock is held by PID \d+"):
            compare_runs(a, b)
    assert compare_runs(a, b).family == 4  # the lock released: the same folders compare


def test_the_modes_compared_are_checked(runs):
    a, b = runs
    assert compare_runs(a, b, modes=["hybrid"]).pairing.modes == ("hybrid",)
    with pytest.raises(ConfigError, match="mode dense is not in both runs"):
        compare_runs(a, b, modes=["dense"])


def test_modes_and_metrics_narrow_the_family_and_api_takes_the_flags_form(runs):
    from rag_lab import api

    a, b = runs
    result = api.compare(a, b, modes="hybrid", metrics="ndcg@10")
    assert result.family == 1 and list(result.table["metric"]) == ["ndcg@10"]
    assert "over all 1 comparisons" in result.notes()[1]
    with pytest.raises(TypeError):
        api.compare(a, b, top_k=3)


def test_a_cut_off_last_line_is_said_not_hidden(runs):
    a, b = runs
    samples = b / "bm25" / "samples.jsonl"
    samples.write_text(samples.read_text() + '{"id": "q99", "scor')  # a run killed mid-write
    result = compare_runs(a, b)
    assert any(n.startswith("B bm25: 24 of 25 samples: the last line of") for n in result.notes())
