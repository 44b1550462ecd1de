"""The judge validation set: the rule's perturbations do what they say, the committed file is what
the rule gives, and no dev-split question is in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.judge_labels.agreement import agreement, roc_auc
from benchmarks.judge_labels.validation_set import (
    LABELS,
    MAX_CHUNKS,
    add_unsupported_sentence,
    build_item,
    change_one_fact,
    eligible_pairs,
    numbers_in,
    Support,
    pick_contexts,
    reference_sentences,
    stated_numbers,
    supported_reference,
)
from rag_lab.evaluate.facts.key_facts import extract_key_facts

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


def _chunks(*texts: str) -> list[tuple[Support, set[str]]]:
    return [(Support.of(t), set(t.lower().split())) for t in texts]


def test_contexts_are_the_chunks_that_support_most_sentences_and_no_more():
    sentences = ["The hourly rate is $10 for toddlers.", "Parents pay 20% of the cost."]
    chunks = _chunks("nothing here", "toddlers hourly rate $10", "toddlers hourly rate $10 parents pay 20% cost",
                     "parents pay 20% cost")
    assert pick_contexts(sentences, {"rate"}, chunks) == [2]  # one chunk supports both
    assert pick_contexts(sentences, {"rate"}, chunks[:2] + chunks[3:]) == [1, 2]  # two needed (index 2 = old 3)
    assert pick_contexts(["Parents pay 30% of the cost."], {"rate"}, chunks) == []  # 30% stated nowhere


def test_a_sentence_is_supported_by_its_facts_and_most_of_its_words():
    support = Support.of("Licensed centers: the weekly rate for infants is $250 in BCY 2026.")
    assert support.supports("In BCY 2026 the weekly rate for infants is $250.")
    assert not support.supports("In BCY 2026 the weekly rate for infants is $260.")  # a fact it does not state
    assert not support.supports("Boards negotiate $250 payments directly with grandparents and neighbours.")


def test_the_reference_keeps_its_supported_sentences_without_the_source_footer():
    reference = ("Infants cost $250 a week. Grandparents receive a bonus of $40. "
                 "--- *Document Source: BCY 2026 chart*")
    assert reference_sentences(reference) == ["Infants cost $250 a week.", "Grandparents receive a bonus of $40."]
    contexts = [{"text": "Weekly cost for infants: $250."}]
    assert supported_reference(reference, contexts) == "Infants cost $250 a week."


def test_only_pairs_outside_the_dev_split_with_key_facts_and_a_pdf_qualify():
    pairs = [{"id": "b", "reference_answer": "It is $5.", "source_file": "x.pdf"},
             {"id": "a", "reference_answer": "It is $5.", "source_file": "x.pdf"},
             {"id": "dev", "reference_answer": "It is $5.", "source_file": "x.pdf"},
             {"id": "nofacts", "reference_answer": "It is free.", "source_file": "x.pdf"},
             {"id": "nopdf", "reference_answer": "It is $5.", "source_file": "y.pdf"}]
    assert [p["id"] for p in eligible_pairs(pairs, frozenset({"dev"}), {"x.pdf"})] == ["a", "b"]


def test_committed_set_is_what_the_rule_gives_and_leaves_out_the_dev_split():
    from rag_lab.datasets import resolve_dataset

    from benchmarks.judge_labels.validation_kinds import entity_pool, with_hard_kinds

    items = _items()
    pool = entity_pool(items)
    dev = resolve_dataset(ROOT).dev_split
    assert len(items) >= 60 and dev
    assert not {i["id"] for i in items} & dev
    qa = {json.loads(line)["id"]: json.loads(line) for line in (ROOT / "qa.jsonl").read_text().splitlines() if line}
    for item in items:
        pair = qa[item["id"]]
        # deterministic: the same inputs (and the corpus' names), the same item
        assert item == with_hard_kinds(build_item(pair, item["contexts"]), pool)
        contexts = "\n".join(c["text"] for c in item["contexts"])
        assert extract_key_facts(item["reference"]) and 1 <= len(item["contexts"]) <= MAX_CHUNKS
        supported, changed, added = item["answers"][:3]
        assert item["source_reference"] == pair["reference_answer"]
        assert tuple(a["label"] for a in item["answers"][:3]) == LABELS and supported["text"] == item["reference"]
        support = Support.of(contexts)  # every sentence of the supported answer is supported, in order
        assert all(support.supports(s) for s in reference_sentences(item["reference"]))
        assert item["reference"] == supported_reference(pair["reference_answer"], item["contexts"])
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


def test_a_degenerate_judge_scores_no_agreement():
    labels = {"supported": 1.0, "changed_fact": 1.0, "added_claim": 1.0}
    constant = agreement({f"q{i}": dict(labels) for i in range(5)})  # says "supported" to everything
    assert (constant.pairs, constant.pairs_won, constant.pairs_tied) == (10, 0, 10)
    assert constant.pairwise_accuracy == 0.0 and constant.auc == 0.5
    failing = agreement({"q1": {"supported": None, "changed_fact": None, "added_claim": None}})
    assert failing.failure_rate == 1.0 and failing.pairwise_accuracy == 0.0 and failing.auc is None
