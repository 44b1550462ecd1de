"""benchmarks/judge_validation.py's table 2 (the generator's own answers): key-fact recall leaves out
the facts the question states (as everywhere else), and its checkpoint is read like the ablation's (a
line cut by a crash is redone, damage is an error naming the file and line)."""

from __future__ import annotations

import json

import pytest

from rag_lab.config import Settings
from rag_lab.errors import DatasetError
from rag_lab.evaluate.run.scorer import Scorer
from tests.answer.conftest import ScriptedLLM
from tests.builders import load_benchmark

ITEM = {"id": "q1", "question": "What is the bi-weekly income limit for a family of 5?",
        "reference": "For a family of 5 the bi-weekly limit is $4,106.",
        "contexts": [{"text": "Family of 5: $4,106 bi-weekly.", "filename": "a.pdf", "page": 1}]}


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("judge_validation")


def _scorer() -> Scorer:  # an offline metric keeps the loop model-free; the bench reads "faithfulness"
    return Scorer(Settings(_env_file=None), metrics=["rouge_l"])


def test_own_answers_key_fact_recall_ignores_facts_the_question_states(bench, tmp_path):
    generator = ScriptedLLM(script="The limit is $4,106 [Doc 1].", model_name="gen")
    bench.own_answers([ITEM], Settings(_env_file=None), _scorer(), tmp_path, generator)
    row = json.loads((tmp_path / "own_answers.jsonl").read_text())
    # the answer states the one key fact the question does not ($4,106); "5" is the question's.
    assert row["key_fact_recall"] == 1.0  # before: 0.5 (the question's "5" counted as a missed fact)


def test_own_answers_redoes_a_cut_line_and_names_a_damaged_one(bench, tmp_path):
    path = tmp_path / "own_answers.jsonl"
    path.write_text('{"id": "q1", "label": "own", "metric": "faithfulness", "sc')  # cut by a crash
    generator = ScriptedLLM(script="The limit is $4,106 [Doc 1].", model_name="gen")
    bench.own_answers([ITEM], Settings(_env_file=None), _scorer(), tmp_path, generator)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q1"] and len(generator.prompts) == 1
    path.write_text(path.read_text() + "not json\n" + path.read_text())
    with pytest.raises(DatasetError, match=r"own_answers.jsonl: line 2"):
        bench.own_answers([ITEM], Settings(_env_file=None), _scorer(), tmp_path, generator)


def test_a_recorded_judgment_counts_only_for_what_it_judged(bench):
    item = ITEM | {"answers": [{"label": "supported", "text": ITEM["reference"]},
                               {"label": "changed_fact", "text": "For a family of 5 the bi-weekly limit is $5,133."}]}
    row = {"inputs": bench.inputs_hash(item, ITEM["reference"])}
    assert bench.same_inputs(row, item, "supported")
    assert not bench.same_inputs(row, item, "changed_fact")  # another answer
    rebuilt = item | {"reference": "The bi-weekly limit is $4,106."}  # the set was rebuilt: judge again
    assert not bench.same_inputs(row, rebuilt, "supported")
    assert not bench.same_inputs({}, item, "supported")  # a row from before the inputs were recorded


def test_skip_and_limit_select_a_span_of_the_set(bench, tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}"}) + "\n" for i in range(1, 13)), encoding="utf-8")
    assert [i["id"] for i in bench.load_set(path, None)] == [f"q{i}" for i in range(1, 13)]
    assert [i["id"] for i in bench.load_set(path, 1, bench.DEV_QUESTIONS)] == ["q12"]
    assert [i["id"] for i in bench.load_set(path, None, 11)] == ["q12"]
    with pytest.raises(SystemExit, match="--skip 12: .* has only 12 questions"):
        bench.load_set(path, None, 12)
