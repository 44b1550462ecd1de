"""`rag-lab report` on an evaluation run folder (the evaluation runner's format): per-mode CIs and
significance, latency/cost, worst questions with answers and cited sources."""

from __future__ import annotations

import json

from rag_lab.report.html import build_report
from rag_lab.report.notebooks import check_self_contained


def test_eval_run_report(tmp_path):
    run = tmp_path / "eval"
    (run / "dense").mkdir(parents=True)
    (run / "bm25").mkdir()
    (run / "manifest.json").write_text(json.dumps({"dataset": {"name": "toy"}, "config": {"modes": ["dense", "bm25"]}}))
    for mode, good in (("dense", 0.2), ("bm25", 0.9)):
        lines = [json.dumps({"id": f"q{i}", "mode": mode, "question": f"question {i}?", "answer": f"answer {i}",
                             "cited_sources": [{"doc": "a.pdf", "page": 1}] if i % 2 else [],
                             "scores": {"key_fact_recall": good + (0.01 * i if mode == "bm25" else 0.0),
                                        "key_fact_precision": 0.5}})
                 for i in range(30)]
        (run / mode / "samples.jsonl").write_text("\n".join(lines) + "\n")
    page = build_report(run)
    assert "could not render" not in page
    assert check_self_contained(page) == []
    for section in ("per-mode-tables", "latency-and-cost", "worst-questions"):
        assert f'id="{section}"' in page
    assert "▲ sig." in page  # bm25 is far better than dense on every question
    assert "<b>cited sources:</b> a.pdf" in page and "(none cited)" in page
    # a worst question ranked by recall shows its precision beside it
    assert "key_fact_recall = 0.200 · key_fact_precision = 0.500" in page


def test_ir_mode_comparison_report(texas_index, lab_settings, tmp_path):
    """`rag-lab ir --out DIR` + `rag-lab report DIR`: a real ranx run of three modes rendered with
    CIs, paired tests against bm25, bar charts and latency."""
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.retrieval.ir import evaluate_modes, write_ir_run

    dataset = resolve_dataset("texas_childcare", lab_settings.datasets_dir)
    report = evaluate_modes(dataset, lab_settings, ["bm25", "dense", "hybrid"], progress=False)
    run = write_ir_run(report, dataset, lab_settings, tmp_path / "ir")
    assert json.loads((run / "manifest.json").read_text())["kind"] == "ir"
    page = build_report(run)
    assert check_self_contained(page) == []
    for section in ("per-mode-tables", "latency"):
        assert f'id="{section}"' in page
    assert page.count("<svg") >= 4  # one bar chart per metric, and latency
    for mode in ("bm25", "dense", "hybrid"):  # the means shown are the run's own
        assert f"{report.results[mode]['ndcg@10']:.3f} [" in page


def test_the_report_shows_where_key_facts_were_lost_beside_recall(tmp_path):
    """Coverage of the chunks (retrieval) and of the selected evidence (selection) stand right after the
    answer's key-fact recall and precision (writing), each with its definition."""
    run = tmp_path / "eval"
    (run / "hybrid").mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps({"dataset": {"name": "toy"}, "config": {"modes": ["hybrid"]}}))
    lines = [json.dumps({"id": f"q{i}", "mode": "hybrid", "question": f"question {i}?", "answer": f"answer {i}",
                         "scores": {"citation_precision": 0.3, "key_fact_recall": 0.25, "key_fact_precision": 0.5,
                                    "context_key_fact_coverage": 0.75, "evidence_key_fact_coverage": 0.5}})
             for i in range(6)]
    (run / "hybrid" / "samples.jsonl").write_text("\n".join(lines) + "\n")
    page = build_report(run)
    table = page[page.index('id="per-mode-tables"'):]
    positions = [table.index(name) for name in ("key_fact_recall", "key_fact_precision", "context_key_fact_coverage",
                                                "evidence_key_fact_coverage", "citation_precision")]
    assert positions == sorted(positions)  # the registry lists citation_precision right after key_fact_precision
    assert "that the evidence selected for an evidence-first answer states" in page
