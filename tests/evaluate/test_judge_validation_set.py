"""The judge validation set: the rule's perturbations do what they say, the committed file is what
the rule gives, and no dev-split question is in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_lab.evaluate.judge.agreement import agreement, roc_auc
from rag_lab.evaluate.judge.validation_set import (
    LABELS,
    add_unsupported_sentence,
    build_item,
    change_one_fact,
    eligible_pairs,
    numbers_in,
    pick_contexts,
    stated_numbers,
)
from rag_lab.evaluate.key_facts import extract_key_facts

ROOT = Path(__file__).resolve().parents[2] / "datasets" / "texas_childcare_full"
SET_FILE = ROOT / "judge_validation.jsonl"


def _items():
    return [json.loads(line) for line in SET_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_money_is_changed_first_everywhere_and_to_a_value_the_contexts_do_not_state():
    reference = "In BCY 2026 a family of 4 may earn $92,041 a year ($92,041 is 85% of SMI)."
    contexts = "Family of 4: $92,041 annual. 85% of state median income. BCY 2026 chart."
    changed, change = change_one_fact(reference, contexts)
    assert change == {"from": "92,041", "to": "115,052", "kind": "money"}
    assert changed == "In BCY 2026 a family of 4 may earn $115,052 a year ($115,052 is 85% of SMI)."


def test_years_move_by_one_and_list_numbers_and_unstated_numbers_are_left_alone():
    changed, change = change_one_fact("(1) Eligibility changed in 2023 for 12 weeks.", "In 2023 the rule changed. (1)")
    assert change["kind"] == "year" and changed == "(1) Eligibility changed in 2024 for 12 weeks."
    assert change_one_fact("(1) It takes 12 weeks.", "(1) a rule") is None  # 12 is not in the contexts


def test_a_percentage_never_passes_100_and_skips_values_the_contexts_state():
    changed, change = change_one_fact("Boards pay 90% of the rate.", "90% of the rate, or 67%, or 113%")
    assert change["to"] == "44" and changed == "Boards pay 44% of the rate."


def test_the_added_sentence_states_numbers_the_contexts_do_not():
    reference, contexts = "Parents pay a share of cost.", "The share of cost is 7% of income in 1990."
    added, sentence = add_unsupported_sentence("q#1", reference, contexts)
    assert added == reference + " " + sentence
    assert stated_numbers(sentence) and not stated_numbers(sentence) & stated_numbers(contexts)
    assert add_unsupported_sentence("q#1", reference, contexts) == (added, sentence)  # a hash, not a draw


def test_contexts_are_the_fewest_chunks_that_state_every_key_fact():
    chunks = [("nothing here", set()), ("rate $10 and 20%", {"rate"}), ("the rate is $10", {"rate"}),
              ("holds 20% only", set())]
    assert pick_contexts("The rate is $10, or 20% of cost.", {"rate"}, chunks) == [1]
    assert pick_contexts("$10 and 30%", {"rate"}, chunks) is None


def test_only_pairs_outside_the_dev_split_with_key_facts_and_a_pdf_qualify():
    pairs = [{"id": "b", "reference_answer": "It is $5.", "source_file": "x.pdf"},
             {"id": "a", "reference_answer": "It is $5.", "source_file": "x.pdf"},
             {"id": "dev", "reference_answer": "It is $5.", "source_file": "x.pdf"},
             {"id": "nofacts", "reference_answer": "It is free.", "source_file": "x.pdf"},
             {"id": "nopdf", "reference_answer": "It is $5.", "source_file": "y.pdf"}]
    assert [p["id"] for p in eligible_pairs(pairs, frozenset({"dev"}), {"x.pdf"})] == ["a", "b"]


def test_committed_set_is_what_the_rule_gives_and_leaves_out_the_dev_split():
    from rag_lab.datasets import resolve_dataset

    items = _items()
    dev = resolve_dataset(ROOT).dev_split
    assert len(items) >= 60 and dev
    assert not {i["id"] for i in items} & dev
    qa = {json.loads(line)["id"]: json.loads(line) for line in (ROOT / "qa.jsonl").read_text().splitlines() if line}
    for item in items:
        pair = qa[item["id"]]
        assert item == build_item(pair, item["contexts"])  # deterministic: the same inputs, the same item
        contexts = "\n".join(c["text"] for c in item["contexts"])
        assert extract_key_facts(item["reference"]) and 1 <= len(item["contexts"]) <= 3
        supported, changed, added = item["answers"]
        assert tuple(a["label"] for a in item["answers"]) == LABELS and supported["text"] == pair["reference_answer"]
        old, new = changed["change"]["from"], changed["change"]["to"]
        assert old.replace(",", "") != new.replace(",", "") and changed["text"] != supported["text"]
        assert {s.text for s in numbers_in(changed["text"])} - {s.text for s in numbers_in(supported["text"])} == {new}
        assert any(s.text == old for s in numbers_in(contexts)) and new.replace(",", "") not in stated_numbers(contexts)
        assert added["text"] == supported["text"] + " " + added["added"]
        assert not stated_numbers(added["added"]) & stated_numbers(contexts)


def test_pairwise_accuracy_and_auc():
    scores = {"q1": {"supported": 1.0, "changed_fact": 0.5, "added_claim": 1.0},
              "q2": {"supported": 0.8, "changed_fact": None, "added_claim": 0.2}}
    a = agreement(scores)
    assert (a.judgments, a.failures, a.pairs, a.pairs_won, a.pairs_tied) == (6, 1, 4, 2, 1)
    assert a.pairwise_accuracy == 0.5 and a.failure_rate == pytest.approx(1 / 6)
    assert a.auc == pytest.approx((1 + 0.5 + 1 + 0 + 1 + 1) / 6)
    assert roc_auc([1.0], []) is None
