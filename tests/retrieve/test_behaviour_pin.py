"""Behaviour pinned across refactors of the retrieval configuration: on texas_childcare, every mode's
ranked chunks (ids and scores) through the command line at a few lever settings, the ablation grid's
cells and metrics, ``ir``'s metrics, the defaults, and the cache keys a run reads (answers, judged
scores, ``ir`` checkpoints, the ablation's candidate lists, tune's rewrites).

``behaviour_pin.json`` holds what the code computed before the configuration object flowed from the
command line to the retrievers; each test recomputes one part and compares. To re-record it on
purpose (a change meant to move a number): ``RAG_LAB_WRITE_PIN=1 pytest tests/retrieve/test_behaviour_pin.py``
and say why in docs/CHANGELOG.md.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

PIN = Path(__file__).with_name("behaviour_pin.json")
WRITE = os.environ.get("RAG_LAB_WRITE_PIN") == "1"
QUESTIONS = (
    "What is the annual income eligibility limit for a family of 4 in Board Contract Year 2026?",
    "How much is the maximum parent share of cost for a single-person household on a monthly basis?",
    "child care provider reimbursement rates 2025",
)
# The flags each search runs with (the modes that take no fused lever warn and ignore them).
LEVER_FLAGS = {
    "defaults": [],
    "moved": ["--fusion-k", "10", "--prefetch", "20", "--dense-weight", "0.7", "--sparse-weight", "1.3",
              "--max-per-doc", "1", "--top-k", "7"],
    "year_boost": ["--year-boost", "0.5", "--top-k", "4"],
    "cap_only": ["--max-per-doc", "2", "--fusion-k", "1"],
}
MODES = ("dense", "bm25", "fusion", "hybrid")
# RetrievalConfig's fields that joined it after the pin (levers the commands had before as flags of their
# own, at the same defaults: off, the plain index).
ADDED_FIELDS = ("year_boost", "contextual")


def _rounded(value):
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def _pinned(part: str, observed) -> None:
    """Compares ``observed`` with the pinned part (``RAG_LAB_WRITE_PIN=1``: records it)."""
    observed = json.loads(json.dumps(_rounded(observed)))
    pinned = json.loads(PIN.read_text(encoding="utf-8")) if PIN.exists() else {}
    if WRITE:
        pinned[part] = observed
        PIN.write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    assert part in pinned, f"{part} is not pinned: record it with RAG_LAB_WRITE_PIN=1"
    assert observed == pinned[part]


@pytest.fixture
def quiet_cli(lab_cli, texas_index):
    def run(*argv: str):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code, out, err = lab_cli(*argv)
        assert code == 0, err
        return out

    return run


def test_search_results_of_every_mode_at_each_lever_setting(quiet_cli):
    observed = {}
    for name, flags in LEVER_FLAGS.items():
        for mode in MODES:
            for i, question in enumerate(QUESTIONS):
                hits = json.loads(quiet_cli("search", "texas_childcare", question, "--mode", mode, "--json", "-",
                                            *flags))
                observed[f"{name}/{mode}/q{i}"] = [[h["doc_id"], h["page"], h["score"], h["text"][:40]] for h in hits]
    for mode in ("fusion", "hybrid"):  # the explanation of each result, with a cap
        hits = json.loads(quiet_cli("search", "texas_childcare", QUESTIONS[0], "--mode", mode, "--json", "-",
                                    "--explain", "--max-per-doc", "1", "--top-k", "4"))
        observed[f"explain/{mode}"] = [h["explanation"] for h in hits]
    _pinned("search", observed)


def test_ir_metrics(quiet_cli):
    report = json.loads(quiet_cli("ir", "texas_childcare", "--limit", "12", "--json", "-", "--no-resume"))
    moved = json.loads(quiet_cli("ir", "texas_childcare", "--limit", "12", "--json", "-", "--no-resume",
                                 "--modes", "fusion,hybrid", "--fusion-k", "5", "--max-per-doc", "1",
                                 "--prefetch", "30"))
    _pinned("ir", {"defaults": _metrics(report), "moved": _metrics(moved)})


def _metrics(report: dict) -> dict:
    """The metric values and the parameters they were computed with (timings and dates left out)."""
    results = {mode: {m: v for m, v in row.items() if not m.endswith("_ms")} for mode, row in report["results"].items()}
    return {"results": results, "per_query": report["per_query"], "params": report["params"],
            "queries": report["queries"]}


def test_grid_cells_and_metrics(lab_settings, texas_index, tmp_path):
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.ablation.grid import GridSpec, compute_grid
    from rag_lab.evaluate.ablation.legs import retrieve_legs
    from rag_lab.evaluate.ablation.metrics import grid_per_query
    from rag_lab.evaluate.ablation.runner import load_questions

    dataset = resolve_dataset("texas_childcare", lab_settings.datasets_dir)
    queries, qrels, references = load_questions(dataset, limit=10)
    spec = GridSpec(fusion_k=(1, 60), prefetch=(20, 100), weights=((1.0, 1.0), (0.7, 1.3)), max_per_doc=(0, 1),
                    top_k=(3, 7))
    questions, _ = retrieve_legs(texas_index, queries, tmp_path, spec.modes, spec.depth, progress=False,
                                 prefetches=spec.prefetch)
    grid = compute_grid(questions, spec)
    per_query = grid_per_query(grid, qrels, references)
    means = {cid: {m: sum(v.values()) / len(v) for m, v in metrics.items() if v} for cid, metrics in per_query.items()}
    _pinned("grid", {"ids": [c.id for c in grid.configs], "baseline": spec.baseline_text(),
                     "chunks": {cid: {q: list(c) for q, c in per_q.items()} for cid, per_q in grid.chunks.items()},
                     "means": means})


def test_defaults_and_parsed_levers(lab_settings):
    import dataclasses

    from rag_lab import api
    from rag_lab.cli.levers import answer_params, retrieval_params
    from rag_lab.cli.main import build_parser
    from rag_lab.evaluate.ablation.grid import GridSpec
    from rag_lab.evaluate.tune.run import default_config
    from rag_lab.retrieve.configuration import DEFAULTS, fused_defaults

    parser = build_parser()
    parsed = {}
    for name, flags in LEVER_FLAGS.items():
        parsed[f"search/{name}"] = retrieval_params(parser.parse_args(["search", "texas_childcare", "q", *flags]))
        parsed[f"ask/{name}"] = answer_params(parser.parse_args(["ask", "texas_childcare", "q", *flags]))
        parsed[f"eval/{name}"] = answer_params(parser.parse_args(["eval", "texas_childcare", *flags]))
    parsed["eval/contextual"] = answer_params(parser.parse_args(["eval", "texas_childcare", "--contextual", "llm",
                                                                 "--top-n", "3", "--max-per-doc", "0"]))
    defaults = {k: v for k, v in api.defaults(lab_settings).items()}
    _pinned("defaults", {"api": {k: list(v) if isinstance(v, tuple) else v for k, v in defaults.items()},
                         "lab": {k: v for k, v in dataclasses.asdict(DEFAULTS).items() if k not in ADDED_FIELDS},
                         "fused": fused_defaults(), "parsed": parsed,
                         "grid": GridSpec().to_dict(),
                         "tune_default": [default_config(GridSpec(), m, metric).id for m in ("fusion", "hybrid")
                                          for metric in ("chunk_hit@5", "ndcg@10")]})


def test_cache_keys(lab_settings, texas_index, tmp_path, monkeypatch):
    from rag_lab.cli.levers import answer_params
    from rag_lab.cli.main import build_parser
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.ablation.legs import ranking_signature
    from rag_lab.evaluate.plan.run_plan import resolve_run
    from rag_lab.evaluate.retrieval import ir
    from rag_lab.evaluate.retrieval.cache_keys import question_key
    from rag_lab.evaluate.run.scorer import Scorer, to_sample
    from rag_lab.evaluate.tune.query_gen import rewrite_key
    from tests.answer.conftest import ScriptedLLM
    from tests.evaluate.test_judged_metrics import _record

    # The answer key also hashes the answer path's code, so any edit there moves it on purpose
    # (tests/answer/test_answer_cache_key.py); here the code's part is held fixed and the pin checks
    # what the levers and settings put in the key.
    monkeypatch.setattr("rag_lab.evaluate.plan.answering.answer_code_hash", lambda: "answer-code")
    dataset = resolve_dataset("texas_childcare", lab_settings.datasets_dir)
    parser = build_parser()
    keys: dict[str, object] = {}
    llm = ScriptedLLM(script=lambda prompt: "x", model_name="pinned")
    for name, flags in LEVER_FLAGS.items():
        params = answer_params(parser.parse_args(["eval", "texas_childcare", *flags]))
        plan = resolve_run(dataset, lab_settings, MODES, rerank=False, params=params, llm=llm)
        configured = resolve_run(dataset, lab_settings, ("hybrid",), rerank=True, params=params)
        for mode in MODES:
            keys[f"answer/{name}/{mode}"] = plan.answerer(mode, lambda: None, None).key(QUESTIONS[0])
        keys[f"answer/{name}/configured"] = configured.answerer("hybrid", lambda: None, None).key(QUESTIONS[0])
        for mode in ("bm25", "fusion", "hybrid"):
            keys[f"ir/{name}/{mode}"] = ir._checkpoint_path(lab_settings, texas_index, mode,
                                                            {k: v for k, v in params.items() if k not in ("top_k",)}).name
    signature = ranking_signature(texas_index)
    keys["legs/signature"] = {k: v for k, v in signature.items() if k != "fingerprint"}
    keys["legs/question"] = question_key(QUESTIONS[0])
    keys["rewrite"] = rewrite_key(llm, QUESTIONS[0], 3)
    judge = ScriptedLLM(script=lambda prompt: "{}", model_name="judge")
    variants = {"defaults": {}, "per_statement": {"judge_nli": "per_statement"},
                "probability": {"judge_nli": "probability", "judge_numbers": "off", "judge_evidence": 5},
                "by_sentence": {"judge_statements": "by_sentence", "judge_context": "probability"}}
    for name, update in variants.items():
        settings = lab_settings.model_copy(update=update)
        scorer = Scorer(settings, judge_llm=judge, metrics=["faithfulness", "llm_context_recall",
                                                             "factual_correctness"])
        for spec in scorer.specs:
            if spec.name in ("faithfulness", "llm_context_recall", "factual_correctness"):
                keys[f"judge/{name}/{spec.name}"] = scorer.judge_key(spec, to_sample(_record()))
        from rag_lab.evaluate.judge import judge_id

        keys[f"judge_id/{name}"] = judge_id(settings)
    _pinned("cache_keys", keys)
