"""`rag-lab ablate` end to end on the real texas_childcare index: legs cached and resumable, the
grid equal to the live retrievers, ranx + RAGAS metrics, CIs and significance in one tidy table."""

from __future__ import annotations

import json

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.ablation import legs as ablation_legs
from rag_lab.evaluate.ablation import runner as ablation
from rag_lab.evaluate.ablation.grid import Config, GridSpec

SPEC = GridSpec(modes=("fusion", "hybrid"), fusion_k=(1, 60), prefetch=(5, 20), top_k=(3, 5),
                weights=((1.0, 1.0), (0.7, 1.3)), default_prefetch=20)


@pytest.fixture(scope="module")
def texas(texas_index, lab_settings):
    return resolve_dataset("texas_childcare", lab_settings.datasets_dir)


@pytest.fixture(scope="module")
def run(texas, lab_settings, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "texas-ablation"
    return ablation.run_ablation(texas, lab_settings, SPEC, out, limit=10, progress=False)


def test_the_manifest_names_the_models_resolved_once(run, texas_index):
    """No answers: no generator; the embedding model is the index's, as eval's manifest names it."""
    assert run.manifest["models"] == {"llm": None, "embedding": texas_index.manifest.embed_model, "judge": None}
    assert run.manifest["index_fingerprint"] == texas_index.manifest.fingerprint


def test_tidy_table_has_every_configuration_and_metric(run):
    results = run.results
    assert len(run.grid.configs) == 2 * 2 * 2 * 2 * 2
    assert set(results["metric"]) == {"ndcg@top_k", "recall@top_k", "precision@top_k", "mrr@top_k",
                                      "id_context_precision", "id_context_recall"}
    assert len(results) == len(run.grid.configs) * 6  # one row per configuration × metric
    assert results["mean"].between(0, 1).all()
    assert (results["ci_low"] <= results["mean"] + 1e-12).all() and (results["mean"] <= results["ci_high"] + 1e-12).all()
    baselines = results[results["config"] == results["baseline"]]
    assert len(baselines) == 2 * 6 and not baselines["significant"].any()  # one baseline per top-k
    tested = results[results["config"] != results["baseline"]]
    assert tested["p_student_holm"].notna().all() and tested["family"].notna().all()
    assert (tested["p_student_holm"] >= tested["p_student"]).all()
    families = run.manifest["significance"]["families"]
    assert set(families) == {"k", "prefetch", "weights", "mode", "interactions"}
    assert families["k"]["comparisons_per_family"] == [1] and families["interactions"]["families"] == 2 * 2 * 6
    assert (run.run_dir / "results.csv").exists() and (run.run_dir / "per_query.csv.gz").exists()


def test_spot_check_live_equals_the_grid_at_every_axis_value(run):
    check = run.manifest["spot_check"]
    assert check["equal"] and check["unconfirmed"] == {}, [c for c in check["checks"] if not c["equal"]]
    assert check["modes"] == ["fusion", "hybrid"] and check["prefetch_values"] == [5, 20]
    covered = {(c["mode"], axis, value) for c in check["checks"] for axis, value in c["axes"]}
    for mode in ("fusion", "hybrid"):  # every value of every axis, not only the prefetch values
        assert {("k", "1"), ("k", "60"), ("prefetch", "5"), ("prefetch", "20"), ("weights", "1:1"),
                ("weights", "0.7:1.3"), ("max_per_doc", "0"), ("top_k", "3"), ("top_k", "5")} == \
            {(a, v) for m, a, v in covered if m == mode}
    # per mode: the baseline and one configuration per other value (k 1, prefetch 5, 0.7:1.3, top-3), 3 questions each
    assert len(check["checks"]) == 2 * 5 * 3


@pytest.mark.parametrize("config", [Config("fusion", 1, 5, 1.0, 1.0, 5), Config("fusion", 60, 20, 0.7, 1.3, 3),
                                    Config("hybrid", 1, 5, 0.7, 1.3, 5), Config("hybrid", 60, 20, 1.0, 1.0, 3)])
def test_grid_rankings_equal_live_retrievers(run, texas_index, config):
    from rag_lab.retrieve.fusion import FusionRetriever
    from rag_lab.retrieve.hybrid import HybridRetriever

    cls = FusionRetriever if config.mode == "fusion" else HybridRetriever
    retriever = cls(texas_index, top_k=config.top_k, prefetch=config.prefetch, fusion_k=config.k,
                    dense_weight=config.dense_weight, sparse_weight=config.sparse_weight)
    queries, _, _ = ablation.load_questions(resolve_dataset("texas_childcare", texas_index.settings.datasets_dir), 10)
    for qid in list(queries)[:4]:
        live = [r.node.node_id for r in retriever.retrieve(queries[qid])]
        assert live == list(run.grid.chunks[config.id][qid]), (config.id, qid)


def test_rerun_uses_the_leg_cache(run, texas, lab_settings, monkeypatch):
    def must_not_retrieve(*args, **kwargs):
        raise AssertionError("cached legs were retrieved again")

    monkeypatch.setattr(ablation_legs, "LegRetriever", must_not_retrieve)
    monkeypatch.setattr(ablation, "retrieve_legs",
                        lambda *a, **kw: ablation_legs.retrieve_legs(*a, **kw, retriever_factory=must_not_retrieve))
    again = ablation.run_ablation(texas, lab_settings, SPEC, run.run_dir, limit=10, progress=False)
    merged = again.results.merge(run.results, on=["config", "metric"])
    assert (merged["mean_x"] == merged["mean_y"]).all() and (merged["p_student_x"].fillna(-1) == merged["p_student_y"].fillna(-1)).all()


def test_interrupted_leg_cache_resumes(run, texas, texas_index, lab_settings, tmp_path):
    legs = (run.run_dir / "legs.jsonl").read_text().splitlines()
    out = tmp_path / "resumed"
    out.mkdir()
    (out / "legs.meta.json").write_text((run.run_dir / "legs.meta.json").read_text())
    (out / "legs.jsonl").write_text("\n".join(legs[:3]) + "\n" + legs[3][: len(legs[3]) // 2])  # cut mid-line
    calls = []

    class Counting(ablation_legs.LegRetriever):
        def __call__(self, query, vector=None):
            calls.append(query)
            return super().__call__(query, vector)

    queries, _, _ = ablation.load_questions(texas, 10)
    questions, _ = ablation_legs.retrieve_legs(texas_index, queries, out, SPEC.modes, SPEC.depth,
                                               progress=False, retriever_factory=Counting)
    assert len(calls) == 7 and [q.qid for q in questions] == list(queries)
    lines = [json.loads(x) for x in (out / "legs.jsonl").read_text().splitlines() if x.strip().endswith("}")]
    assert sorted(r["qid"] for r in lines) == sorted(queries)


def test_legs_are_the_retrievers_own_rankings(texas, texas_index):
    """Batched embeddings and the node-free bm25 leg give exactly what the mode retrievers return."""
    from rag_lab.retrieve.bm25 import BM25Retriever
    from rag_lab.retrieve.dense import DenseRetriever

    queries, _, _ = ablation.load_questions(texas, 6)
    texts = list(queries.values())
    legs = ablation_legs.LegRetriever(texas_index, ["dense", "bm25", "sparse"], 10)
    vectors = legs.embed(texts)
    for text, vector in zip(texts, vectors):
        found, ms = legs(text, vector)
        assert [i for i, _, _ in found["dense"]] == [r.node.node_id for r in DenseRetriever(texas_index, top_k=10).retrieve(text)]
        bm25 = BM25Retriever(texas_index, top_k=10).retrieve(text)
        assert [(i, round(s, 5)) for i, _, s in found["bm25"]] == [(r.node.node_id, round(r.score, 5)) for r in bm25]
        assert [d for _, d, _ in found["bm25"]] == [r.node.metadata["filename"] for r in bm25]
        assert set(ms) == {"dense+sparse", "bm25"}


def test_load_ablation_round_trips(run):
    loaded = ablation.load_ablation(run.run_dir)
    assert loaded.manifest["n_configs"] == 32 and len(loaded.results) == len(run.results)
    assert set(loaded.per_query["metric"]) == set(run.results["metric"])
    assert loaded.details  # questions, relevant and retrieved documents for the report


def test_answer_configs_generate_once_per_distinct_context(run, texas, lab_settings, monkeypatch):
    from llama_index.core.llms import MockLLM

    from rag_lab.evaluate.ablation import answers as ablation_answers

    configs = ablation_answers.parse_answer_configs("3,5", SPEC)
    assert [c.id for c in configs] == ["fusion|k=60|p=20|w=1:1|top=3", "hybrid|k=60|p=20|w=1:1|top=3",
                                       "fusion|k=60|p=20|w=1:1|top=5", "hybrid|k=60|p=20|w=1:1|top=5"]
    assert ablation_answers.parse_answer_configs(None, SPEC)[0].top_k == 3
    with pytest.raises(ValueError, match="neither"):
        ablation_answers.parse_answer_configs("bogus", SPEC)
    # A deterministic LLM drives the loop (the real local model runs in the notebooks and the demo).
    result = ablation.run_ablation(texas, lab_settings, SPEC, run.run_dir, limit=10, progress=False,
                                   answer_configs=configs, answer_limit=3, llm=MockLLM(max_tokens=8))
    answers = result.answers
    assert len(answers) == 4 * 3 and set(answers["config"]) == {c.id for c in configs}
    contexts = {(q, tuple(result.grid.chunks[c.id][q])) for c in configs for q in answers["qid"].unique()}
    lines = (run.run_dir / "answers.jsonl").read_text().splitlines()
    assert len(lines) == len(contexts) < 12  # fusion and hybrid share contexts: generated once each
    assert result.manifest["answers"]["distinct_contexts"] == len(contexts)
    # the models that made these numbers, by full identity (the generator as the answer cache names it)
    from rag_lab.models.llm.identity import llm_identity

    generator = llm_identity(MockLLM(max_tokens=8))
    assert result.manifest["answers"]["llm"] == generator == result.manifest["models"]["llm"]
    assert result.manifest["models"]["embedding"] == result.manifest["embed_model"]
    assert result.manifest["models"]["judge"] is None

    def must_not_generate(*args, **kwargs):
        raise AssertionError("a cached answer was generated again")

    monkeypatch.setattr("rag_lab.answer.engine.build_engine", must_not_generate)
    again = ablation.run_ablation(texas, lab_settings, SPEC, run.run_dir, limit=10, progress=False,
                                  answer_configs=configs, answer_limit=3, llm=MockLLM(max_tokens=8))
    assert list(again.answers["answer"]) == list(answers["answer"])
    # another generator (here: whole chunks instead of compressed ones) never reuses these answers.
    # llm=None keys the answers by the configured local model; loading its 1.1 GB just to be refused
    # cost ~95 s on shared cores, so get_llm hands back a stand-in: the key is still the local model's.
    monkeypatch.setattr("rag_lab.models.llm.get_llm", lambda settings: MockLLM(max_tokens=8))
    for other in ({"settings": lab_settings.model_copy(update={"compress": "off"}), "llm": MockLLM(max_tokens=8)},
                  {"settings": lab_settings, "llm": None}):  # the configured local model, not the mock
        with pytest.raises(AssertionError, match="generated again"):
            ablation.run_ablation(texas, other["settings"], SPEC, run.run_dir, limit=10, progress=False,
                                  answer_configs=configs, answer_limit=3, llm=other["llm"])
    loaded = ablation.load_ablation(run.run_dir)
    assert len(loaded.answers) == 12 and isinstance(loaded.answers["cited"].iloc[0], list)
    from rag_lab.report.html import build_report

    page = build_report(run.run_dir)
    assert 'id="answer-level-metrics"' in page and "<b>answer:</b>" in page
    assert "key-fact precision [95% CI]" in page and " · precision " in page  # beside recall, table and cards


def test_answered_questions_are_spread_over_the_source_documents(texas, lab_settings, tmp_path):
    """Without --limit, the answered questions come from different PDFs (the spread --limit uses),
    not the first qa.jsonl lines, which all ask about one document."""
    from llama_index.core.llms import MockLLM

    first_lines = [p for p in texas.load_qa() if p.source_files][:3]
    assert len({p.source_file for p in first_lines}) == 1  # why the first lines are the wrong sample
    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(20,), top_k=(3,), default_prefetch=20)
    result = ablation.run_ablation(texas, lab_settings, spec, tmp_path / "spread", progress=False,
                                   answer_configs=spec.configs(), answer_limit=3, llm=MockLLM(max_tokens=8))
    answered = list(dict.fromkeys(result.answers["qid"]))
    queries, qrels = texas.judged_queries(3)
    assert answered == list(queries)  # the same questions `--limit 3` evaluates
    assert len({sorted(qrels[q])[0] for q in answered}) == 3  # three different source documents


def test_cli_summary_says_which_family_each_correction_ran_over(run):
    from rag_lab.cli.ablate import render_summary

    text = render_summary(run)
    assert ("spot check (fusion, hybrid; 30 live queries: every RRF k, prefetch, weight pair, cap and top-k of the "
            "grid, 3 questions each): live rankings equal the grid's") in text
    assert "significance: significant = family-wise error rate ≤ 0.05 over all" in text
    assert "Exploratory per-family view" in text
    for axis, size in (("k", 1), ("prefetch", 1), ("weights", 1), ("mode", 1), ("interactions", 4)):
        assert f"  {axis}: " in text and f"families of {size} comparisons" in text, axis


def test_a_rerun_without_answers_shows_no_earlier_answers(texas, lab_settings, tmp_path):
    from llama_index.core.llms import MockLLM

    from rag_lab.report.html import build_report

    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(20,), top_k=(3,), default_prefetch=20)
    out = tmp_path / "rerun"
    answered = ablation.run_ablation(texas, lab_settings, spec, out, limit=2, progress=False,
                                     answer_configs=spec.configs(), answer_limit=2, llm=MockLLM(max_tokens=8))
    assert answered.answers is not None and ablation.load_ablation(out).answers is not None
    plain = ablation.run_ablation(texas, lab_settings, spec, out, limit=2, progress=False)  # --answer-configs none
    assert plain.manifest["answers"] is None and plain.answers is None
    assert not (out / ablation.ANSWERS_CSV).exists() and (out / "answers.jsonl").exists()  # the cache stays
    assert ablation.load_ablation(out).answers is None
    assert 'id="answer-level-metrics"' not in build_report(out)
