"""run_evaluation on the real texas_childcare index: records, scores, frames, cache, failures."""

from __future__ import annotations

import json
import math

import pytest

from rag_lab.evaluate import load_run, run_evaluation
from rag_lab.evaluate.metrics import offline_metric_names
from rag_lab.evaluate.run.scorer import COVERAGE_METRICS
from tests.answer.conftest import ScriptedLLM
from tests.evaluate.conftest import quoting_answer

OFFLINE = set(offline_metric_names()) | {"mrr@10", "ndcg@10"} | set(COVERAGE_METRICS)


@pytest.fixture(scope="module")
def run_dir(lab_settings, texas_index, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "try"
    llm = ScriptedLLM(script=quoting_answer, model_name="scripted-runner")
    run_evaluation("texas_childcare", lab_settings, ["bm25", "dense"], out, limit=3, rerank=False,
                   progress=False, llm=llm)
    return out, llm


def test_each_mode_writes_one_complete_record_per_sample(run_dir, lab_settings):
    out, llm = run_dir
    assert len(llm.answer_prompts) == 6  # 3 questions × 2 modes, nothing twice
    lines = [json.loads(line) for line in (lab_settings.datasets_dir / "texas_childcare" / "qa.jsonl")
             .read_text(encoding="utf-8").splitlines()]
    # --limit 3 on three PDFs: the first question about each PDF, in file order
    questions = [next(q for q in lines if q["source_file"] == f) for f in dict.fromkeys(q["source_file"] for q in lines)]
    assert len(questions) == 3
    for mode in ("bm25", "dense"):
        records = [json.loads(line) for line in (out / mode / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [r["id"] for r in records] == [q["id"] for q in questions]
        for record, qa in zip(records, questions):
            assert record["error"] is None and record["mode"] == mode
            assert record["question"] == qa["question"] and record["reference"] == qa["reference_answer"]
            assert record["relevant"] == {qa["source_file"]: 1}
            assert record["contexts"] and {"rank", "doc_id", "filename", "page", "text"} <= set(record["contexts"][0])
            assert record["answer"].endswith("]") and record["cited_sources"]
            assert {"retrieve", "generate", "total", "score"} <= set(record["latency"])
            assert record["usage"]["calls"] == 1 and record["cost_usd"] is None  # an injected model has no price
            scores = record["scores"]
            assert {"id_context_precision", "id_context_recall", "rouge_l", "string_similarity",
                    "semantic_similarity", "mrr@10", "ndcg@10", "citation_precision"} <= set(scores)
            assert all(v is None or 0.0 <= v <= 1.0 + 1e-9 for v in scores.values())
            # the scripted answer quotes the chunk it cites: the offline check must call that correct
            assert scores["citation_precision"] == 1.0
            assert record["citations"]["cites"] is True
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dataset"]["name"] == "texas_childcare" and len(manifest["dataset"]["hash"]) == 64
    assert manifest["models"]["embedding"].startswith("local:") and manifest["packages"]["ragas"]
    assert manifest["config"]["modes"] == ["bm25", "dense"] and "git_commit" in manifest
    assert not any("key" in k for k in manifest["settings"])


def test_frames_are_tidy_and_count_nans(run_dir):
    out, _ = run_dir
    run = load_run(out)
    assert list(run.samples.columns) == ["run", "mode", "kind", "sample_id", "metric", "value"]
    assert set(run.samples["mode"]) == {"bm25", "dense"}
    assert set(run.samples["metric"]) <= OFFLINE
    rouge = run.summary.set_index(["mode", "metric"]).loc[("bm25", "rouge_l")]
    bm25 = run.samples[(run.samples["mode"] == "bm25") & (run.samples["metric"] == "rouge_l")]
    assert rouge["n"] + rouge["nan"] == len(bm25) == 3
    assert rouge["mean"] == pytest.approx(bm25["value"].mean())
    modes = run.modes.set_index("mode")
    assert modes.loc["bm25", "samples"] == 3 and modes.loc["bm25", "errors"] == 0
    assert 0 < modes.loc["bm25", "latency_p50_s"] <= modes.loc["bm25", "latency_p95_s"]
    table = run.table()
    assert "rouge_l" in table.columns and "rouge_l NaN" in table.columns


def test_rerun_is_answered_from_the_cache_and_resume_skips(run_dir, lab_settings, tmp_path):
    out, _ = run_dir
    llm = ScriptedLLM(script=quoting_answer, model_name="scripted-runner")  # the same model: its answers are cached
    again = run_evaluation("texas_childcare", lab_settings, ["bm25"], tmp_path / "again", limit=3, rerank=False,
                           progress=False, llm=llm)
    assert llm.prompts == [] and again.modes.loc[0, "cached"] == 3  # unchanged samples cost nothing
    first = load_run(out).samples.query("mode == 'bm25'").reset_index(drop=True)
    second = again.samples.drop(columns="run").reset_index(drop=True)
    assert first.drop(columns="run").equals(second)
    before = (out / "bm25" / "samples.jsonl").read_bytes()
    run_evaluation("texas_childcare", lab_settings, ["bm25"], out, limit=3, resume=True, rerank=False,
                   progress=False, llm=llm)
    assert (out / "bm25" / "samples.jsonl").read_bytes() == before


def test_a_change_in_compression_is_not_answered_from_the_cache(run_dir, lab_settings, tmp_path, monkeypatch):
    """Compression changes what the model reads: a run with another setting, or another selection
    rule, asks the model again instead of reusing answers made from other contexts."""
    import rag_lab.answer.compress as compress

    llm = ScriptedLLM(script=quoting_answer, model_name="scripted-runner")  # cached by run_dir's run
    assert lab_settings.context_lines == 12  # run_dir's answers: compressed (auto, local provider)
    off = lab_settings.model_copy(update={"compress": "off"})
    run_evaluation("texas_childcare", off, ["bm25"], tmp_path / "off", limit=1, rerank=False, progress=False, llm=llm)
    assert len(llm.prompts) == 1
    monkeypatch.setattr(compress, "RULE", compress.RULE + "-changed")
    run_evaluation("texas_childcare", lab_settings, ["bm25"], tmp_path / "rule", limit=1, rerank=False,
                   progress=False, llm=llm)
    assert len(llm.prompts) == 2
    run_evaluation("texas_childcare", lab_settings, ["bm25"], tmp_path / "again", limit=1, rerank=False,
                   progress=False, llm=llm)
    assert len(llm.prompts) == 2  # and the new answer is cached in its turn


def test_a_failing_sample_is_recorded_and_the_run_goes_on(lab_settings, texas_index, tmp_path):
    def flaky(prompt: str) -> str:
        if "family of 4" in prompt:
            raise RuntimeError("provider fell over")
        return quoting_answer(prompt)

    run = run_evaluation("texas_childcare", lab_settings, ["bm25"], tmp_path / "r", limit=3, rerank=False,
                         progress=False, llm=ScriptedLLM(script=flaky, model_name="scripted-flaky"), top_n=3)
    records = run.records["bm25"]
    failed = [r for r in records if r["error"]]
    assert len(records) == 3 and len(failed) == 1
    assert "provider fell over" in failed[0]["error"] and failed[0]["scores"] == {}
    assert run.modes.loc[0, "errors"] == 1
    # --resume (same model: resuming another configuration is refused) retries the failed sample only;
    # the frames hold each sample once
    llm = ScriptedLLM(script=quoting_answer, model_name="scripted-flaky")
    again = run_evaluation("texas_childcare", lab_settings, ["bm25"], tmp_path / "r", limit=3, rerank=False,
                           progress=False, llm=llm, top_n=3, resume=True)
    assert len(llm.answer_prompts) == 1 and "family of 4" in llm.answer_prompts[0]
    assert len(again.records["bm25"]) == 3 and again.modes.loc[0, "errors"] == 0


def test_own_corpus_with_questions_only_gets_the_metrics_needing_no_reference(lab_settings, texas_index, tmp_path):
    import shutil

    corpus = tmp_path / "mine"
    (corpus / "docs").mkdir(parents=True)
    pdf = "bcy-26-psoc-chart-twc.pdf"
    shutil.copy(lab_settings.datasets_dir / "texas_childcare" / "pdfs" / pdf, corpus / "docs" / pdf)
    (corpus / "qa.jsonl").write_text(
        json.dumps({"id": "q1", "question": "What is the parent share of cost for a family of 3?"}) + "\n"
        + json.dumps({"question": "What does BCY 26 mean?", "source_file": pdf}) + "\n", encoding="utf-8")
    # whole chunks: the scripted LLM quotes a "$" line, which compression would cut for "BCY 26"
    settings = lab_settings.model_copy(update={"compress": "off"})
    run = run_evaluation(str(corpus), settings, ["bm25"], tmp_path / "own", rerank=False, progress=False,
                         llm=ScriptedLLM(script=quoting_answer))
    by_id = {r["id"]: r for r in run.records["bm25"]}
    assert set(by_id) == {"q1", "line-2"}
    assert "rouge_l" not in by_id["q1"]["scores"] and "id_context_recall" not in by_id["q1"]["scores"]
    assert by_id["line-2"]["scores"]["id_context_recall"] == 1.0  # the only document is the source
    assert by_id["line-2"]["scores"]["mrr@10"] == 1.0
    assert not math.isnan(run.summary.query("metric == 'citation_precision'")["mean"].iloc[0])
