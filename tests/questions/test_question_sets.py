"""`--questions human|synthetic|FILE` (``questions=``): one routing for every command that reads
questions, the default rule with its notice, BEIR datasets, and the manifest and verdict naming the set."""

from __future__ import annotations

import json
import shutil

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.errors import DatasetError
from rag_lab.evaluate.questions.question_set import question_set, with_questions

N_FILE = 12


@pytest.fixture(scope="module")
def texas(texas_index, lab_settings):
    return resolve_dataset("texas_childcare", lab_settings.datasets_dir)


@pytest.fixture(scope="module")
def question_file(texas, tmp_path_factory):
    """A FILE of 12 synthetic-origin lines over texas_childcare's documents."""
    path = tmp_path_factory.mktemp("questions") / "mine.jsonl"
    human = [json.loads(x) for x in texas.qa_file.read_text().splitlines() if x.strip()][:N_FILE]
    path.write_text("".join(json.dumps({"id": f"synthetic-{i}", "question": f"In other words: {h['question']}",
                                        "reference_answer": h.get("reference_answer"), "source_file": h["source_file"],
                                        "origin": "synthetic"}) + "\n" for i, h in enumerate(human)))
    return path


def test_human_is_the_default_and_a_file_is_read_with_its_origin(texas, question_file):
    assert with_questions(texas) is texas and question_set(texas).origin == "human"
    chosen = with_questions(texas, str(question_file))
    assert chosen.question_origin == "synthetic" and chosen.qa_file == question_file.resolve()
    assert len(chosen.judged_queries()[0]) == N_FILE
    assert texas.qa_file.exists() and len(texas.judged_queries()[0]) == 44  # the human set is left alone


def test_synthetic_without_a_file_and_a_missing_file_are_one_line_errors(texas, tmp_path):
    with pytest.raises(DatasetError, match="no synthetic questions.*\n.*rag-lab synth texas_childcare"):
        with_questions(texas, "synthetic")
    with pytest.raises(DatasetError, match="no such file"):
        with_questions(texas, str(tmp_path / "nope.jsonl"))


def test_without_human_questions_the_synthetic_ones_are_used_with_a_notice(tmp_path, question_file, texas):
    folder = tmp_path / "folder"
    shutil.copytree(texas.documents_dir, folder)
    shutil.copy(question_file, folder / "qa.synthetic.jsonl")
    said = []
    chosen = with_questions(resolve_dataset(folder), notice=said.append)
    assert chosen.question_origin == "synthetic" and len(said) == 1 and "no human questions" in said[0]
    with pytest.raises(DatasetError, match="no human questions"):
        with_questions(resolve_dataset(folder), "human")


def test_a_beir_dataset_reads_synthetic_questions_and_their_documents_as_judgements(tmp_path):
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": d, "text": f"text {d}"}) + "\n"
                                               for d in ("d1", "d2")))
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "human claim"}) + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (root / "qa.synthetic.jsonl").write_text(json.dumps({"id": "s1", "question": "made claim", "source_file": "d2",
                                                         "origin": "synthetic"}) + "\n")
    human = resolve_dataset(root)
    assert human.judged_queries() == ({"q1": "human claim"}, {"q1": {"d1": 1}})
    assert with_questions(human, "synthetic").judged_queries() == ({"s1": "made claim"}, {"s1": {"d2": 1}})


def test_the_manifest_and_the_verdict_name_the_question_set(texas, question_file, lab_settings):
    from rag_lab.evaluate.store.manifest import build_manifest
    from rag_lab.report.verdict import Verdict, with_questions as verdict_with_questions

    manifest = build_manifest(dataset=with_questions(texas, str(question_file)), settings=lab_settings, config={},
                              models={})
    entry = manifest["question_set"]
    assert entry["origin"] == "synthetic" and entry["count"] == N_FILE and len(entry["sha256"]) == 64
    verdict = verdict_with_questions(Verdict("bm25", ["bm25", "dense"], 12, 2, 0.05, 0.001, []), manifest)
    assert verdict.headline().endswith(f"— questions: synthetic (mine.jsonl, a set of {N_FILE})")


def test_ir_scores_the_chosen_questions(lab_cli, question_file, texas):
    code, out, err = lab_cli("ir", "texas_childcare", "--modes", "bm25", "--questions", str(question_file), "--json")
    assert code == 0, err
    assert json.loads(out)["queries"]["evaluated"] == N_FILE


def test_eval_plans_the_chosen_questions(question_file, texas, lab_settings, tmp_path):
    from rag_lab import api

    plan = api.evaluate(texas, modes="bm25", out=tmp_path / "run", dry_run=True, questions=str(question_file),
                        settings=lab_settings)
    assert plan.samples == N_FILE


def test_ablate_scores_the_chosen_questions(question_file, texas, lab_settings, tmp_path):
    from rag_lab import api

    result = api.ablate(texas, tmp_path / "ablation", modes="fusion", fusion_k=[60], prefetch=[100], top_k=[5],
                        answer_configs="none", questions=str(question_file), settings=lab_settings)
    assert result.manifest["question_set"]["origin"] == "synthetic"
    assert set(result.per_query["qid"]) == {f"synthetic-{i}" for i in range(N_FILE)}


def test_tune_chooses_on_synthetic_questions_and_confirms_on_the_human_ones(question_file, texas, lab_settings,
                                                                           tmp_path):
    from rag_lab.evaluate.ablation.grid import GridSpec
    from rag_lab.evaluate.tune import tune

    spec = GridSpec(modes=("fusion",), fusion_k=(10, 60), prefetch=(100,), top_k=(5,), weights=((1.0, 1.0),),
                    max_per_doc=(0,))
    result = tune(with_questions(texas, str(question_file)), lab_settings, tmp_path / "tune", spec, progress=False)
    assert result.n_dev == N_FILE and result.n_rest == 44  # every synthetic question chooses; all 44 human confirm
    assert "human questions" in result.split_note


def test_split_refuses_synthetic_questions_where_human_ones_exist(lab_cli, question_file, texas):
    code, out, err = lab_cli("split", "texas_childcare", "--questions", str(question_file))
    assert code == 2 and "has human questions" in err and not (texas.root / "dev_split.txt").exists()
