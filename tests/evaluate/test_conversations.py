"""Multi-turn scenarios through the agent with history, scored per turn by expected content."""

from __future__ import annotations

import json
import shutil

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.errors import DatasetError
from rag_lab.evaluate.run.conversations import expected_content, load_scenarios, run_conversations
from tests.answer.test_agent import ToolScriptLLM


def test_bundled_scenarios_load(lab_settings):
    scenarios = load_scenarios(resolve_dataset("texas_childcare", lab_settings.datasets_dir))
    assert len(scenarios) == 5 and sum(len(s.turns) for s in scenarios) == 23
    first = next(s for s in scenarios if s.id == "ccs_eligibility_conv")
    assert first.turns[1].user == "What about for a family of 4?"
    assert first.turns[1].expected == ("family of 4", "income", "$") and first.turns[1].min_score == 70


def test_expected_content_is_the_share_of_strings_found():
    assert expected_content("For a family of 4 the income limit is $92,041.", ("family of 4", "income", "$")) == 1.0
    assert expected_content("Apply online.", ("apply", "workforce")) == 0.5
    assert expected_content("anything", ()) is None


def test_scenario_runs_with_history_and_resumes(lab_settings, texas_index, tmp_path):
    root = tmp_path / "mine"
    shutil.copytree(lab_settings.datasets_dir / "texas_childcare", root, ignore=shutil.ignore_patterns("scenarios"))
    dataset = resolve_dataset(root)
    assert dataset.name == "texas_childcare"
    # a copy elsewhere is another corpus and gets its own index (parse and embedding caches make it cheap)
    from rag_lab.index import build_index

    build_index(dataset, lab_settings, progress=False)
    reply = "For a family of 4 the income limit is $92,041 [Doc 1]; apply at your local Workforce board."
    llm = ToolScriptLLM(script=[{"query": "income limits"}, reply])
    out = tmp_path / "run"
    run_conversations(dataset, lab_settings, out, resume=False, progress=False, llm=llm, top_k=2, prefetch=20)
    records = [json.loads(line) for line in (out / "conversations" / "samples.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == [f"ccs_eligibility_conv#T{n}" for n in (1, 2, 3, 4)]
    by_turn = {r["turn"]: r for r in records}
    assert by_turn[2]["scores"] == {"turn_expected_content": 1.0, "turn_pass": 1.0}
    assert by_turn[3]["scores"]["turn_expected_content"] == 0.5  # "income" found, "eligible" not
    assert by_turn[3]["scores"]["turn_pass"] == 0.0  # below the turn's min_score of 70
    # history: the 4th turn's LLM call still sees the first question
    assert any("What are the income limits" in str(m.content) for m in llm.calls[-1]["messages"])
    before = len(llm.calls)
    run_conversations(dataset, lab_settings, out, resume=True, progress=False, llm=llm)
    assert len(llm.calls) == before  # finished scenarios are not replayed


def test_a_dataset_without_scenarios_says_where_to_put_them(tmp_path):
    (tmp_path / "a.txt").write_text("text", encoding="utf-8")
    with pytest.raises(DatasetError, match="no conversation scenarios"):
        load_scenarios(resolve_dataset(tmp_path))
