"""The validation set's answers numbers cannot catch: negated and swapped-entity."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.judge_labels.validation_kinds import (add_hard_kinds, entity_pool, negate, swap_entity,
                                                     with_hard_kinds)
from benchmarks.judge_labels.validation_set import ALL_LABELS, stated_numbers

ROOT = Path(__file__).resolve().parents[2] / "datasets" / "texas_childcare_full"


def _items():
    return [json.loads(line) for line in (ROOT / "judge_validation.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]


def test_negation_is_at_the_first_auxiliary_and_keeps_the_numbers():
    text, sentence = negate("The limit is $92,041. Parents can appeal within 14 days.")
    assert text == "The limit is not $92,041. Parents can appeal within 14 days." and sentence == "The limit is not $92,041."
    assert negate("Parents can appeal.")[0] == "Parents cannot appeal."
    assert negate("TWC reviews each plan.")[0] == "It is not true that TWC reviews each plan."
    assert stated_numbers(text) == stated_numbers("The limit is $92,041. Parents can appeal within 14 days.")


def test_a_swapped_name_comes_from_the_corpus_and_is_not_in_the_items_contexts():
    pool = {"name": ["Gulf Coast Board", "Harris County Board", "Texas Rising Star"], "acronym": ["CCS", "TEA", "TWC"]}
    contexts = "The Harris County Board sets rates. TWC funds the program."
    swapped, swap = swap_entity("q1", "The Harris County Board sets rates for the Harris County Board area.",
                                contexts, pool)
    assert swap == {"from": "Harris County Board", "to": "Gulf Coast Board", "kind": "name"}  # same last word
    assert swapped == "The Gulf Coast Board sets rates for the Gulf Coast Board area."
    assert swap_entity("q1", "TWC funds it.", contexts, pool)[1]["to"] in {"CCS", "TEA"}
    assert swap_entity("q1", "It is funded.", contexts, pool) is None


def test_the_committed_set_has_both_kinds_deterministically_and_no_dev_question():
    from rag_lab.datasets import resolve_dataset

    items = _items()
    dev = resolve_dataset(ROOT).dev_split
    assert not {i["id"] for i in items} & dev
    assert add_hard_kinds(items) == items  # rebuilding from the committed items gives them back
    pool = entity_pool(items)
    # the pool is the contexts' names only: no question or reference text (of any split) feeds it
    contexts = " ".join(" ".join(c["text"].split()) for i in items for c in i["contexts"])
    assert all(name in contexts for name in pool["name"] + pool["acronym"])
    swaps = 0
    for item in items:
        answers = {a["label"]: a for a in item["answers"]}
        assert set(answers) <= set(ALL_LABELS) and "negated" in answers
        assert answers["negated"]["text"] != item["reference"]
        if "swapped_entity" in answers:
            swaps += 1
            swap = answers["swapped_entity"]["swap"]
            context = "\n".join(c["text"] for c in item["contexts"]).lower()
            assert swap["from"].lower() in context and swap["to"].lower() not in context
            assert swap["to"] in answers["swapped_entity"]["text"] and swap["to"] not in item["reference"]
        assert with_hard_kinds({**item, "answers": item["answers"][:3]}, pool) == item
    assert swaps >= 0.75 * len(items)
