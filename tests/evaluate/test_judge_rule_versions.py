"""The judge's cache key changes with the judge: every rule and prompt has a version, the version is
in the judged scores' cache key, and a rule whose code changes without a new version fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rag_lab.evaluate.judge import versions
from rag_lab.evaluate.judge.versions import RULES, code_hash

TABLE = Path(__file__).with_name("judge_rules.json")


def test_every_rules_code_is_recorded_under_its_current_version():
    """judge_rules.json: rule → {version: hash of its code}. A hash that differs from the recorded one
    of the same version means the code changed and the version did not (old judged scores would be
    served for the new rule): bump the version in ``RULES`` and add the new version's hash."""
    recorded = json.loads(TABLE.read_text())
    assert set(recorded) == {rule.name for rule in RULES}, "judge_rules.json must name every rule, and only those"
    problems = []
    for rule in RULES:
        now = code_hash(rule)
        if rule.version not in recorded[rule.name]:
            problems.append(f"{rule.name}: version {rule.version} is not recorded: add \"{rule.version}\": \"{now}\"")
        elif recorded[rule.name][rule.version] != now:
            problems.append(f"{rule.name}: its code changed since {rule.version} was recorded (hash {now}, recorded "
                            f"{recorded[rule.name][rule.version]}): give it a new version in rag_lab/evaluate/judge/"
                            f"versions.py and record that version's hash (python -m rag_lab.evaluate.judge.versions)")
    assert not problems, "\n".join(problems)


def test_the_hash_follows_the_code_a_rule_calls_and_the_constants_it_reads(monkeypatch):
    from rag_lab.evaluate.judge import numeric, rules

    numbers, negation = versions.BY_NAME["numbers"], versions.BY_NAME["negation"]
    before = code_hash(numbers), code_hash(negation)
    # a regular expression the numbers rule reads through values_of (not its entry point's own text)
    monkeypatch.setattr(numeric, "_PERCENT", re.compile(r"(\d+)\s?%"))
    assert code_hash(numbers) != before[0]
    monkeypatch.undo()
    assert (code_hash(numbers), code_hash(negation)) == before
    # the word list of the negation rule
    monkeypatch.setattr(rules, "_PRIVATIVE", re.compile(r"\b(?:free)\b"))
    assert code_hash(negation) != before[1] and code_hash(numbers) == before[0]


def test_docstrings_comments_and_annotations_are_not_code():
    def plain(x):
        return x + 1

    def documented(x: int) -> int:
        """Adds one."""
        # a comment
        return x + 1

    def changed(x):
        return x + 2

    syntax = versions._syntax
    assert syntax(plain).replace("documented", "plain") == syntax(documented).replace("documented", "plain")
    assert syntax(plain).replace("changed", "plain") != syntax(changed).replace("changed", "plain")


def test_a_rule_of_another_rule_counts_by_its_version(monkeypatch):
    """The verdict path calls the numbers rule: a change there asks a new numbers version, not a new
    verdict version as well (the verdict's hash holds numbers' version, which the key holds too)."""
    from rag_lab.evaluate.judge import numeric

    verdict = versions.BY_NAME["verdict"]
    before = code_hash(verdict)
    monkeypatch.setattr(numeric, "_PERCENT", re.compile(r"(\d+)\s?%"))
    assert code_hash(verdict) == before
    assert versions.code_of(verdict)["rag_lab.evaluate.judge.numeric:missing_values"] == \
        f"numbers@{versions.version_of('numbers')}"


def test_a_new_rule_version_is_a_new_cache_key_and_judge_id(lab_settings, monkeypatch):
    """The same sample, metric and judge under a bumped numbers rule: another judged-score key (the old
    score is not served) and another judge id in the manifest."""
    from dataclasses import replace

    from rag_lab.config import Settings
    from rag_lab.evaluate.judge import judge_id
    from rag_lab.evaluate.run.scorer import Scorer, to_sample
    from tests.evaluate.judge_doubles import ConstrainedLLM

    class Double(ConstrainedLLM):
        def reply(self, prompt, **kwargs):
            raise AssertionError("no call: only keys are built")

    settings = lab_settings.model_copy(update={"llm_provider": "local"})
    record = {"id": "q", "question": "What is the limit?", "answer": "It is $4,106.", "reference": "$4,106.",
              "contexts": [{"text": "The limit is $4,106."}]}

    def keys():
        scorer = Scorer(settings, judge_llm=Double(), metrics=["faithfulness", "factual_correctness"])
        sample = to_sample(record)
        return {spec.name: scorer.judge_key(spec, sample) for spec in scorer.specs}

    before, name_before = keys(), judge_id(Settings(_env_file=None, llm_provider="local"))  # type: ignore[call-arg]
    bumped = tuple(replace(r, version="numbers-v999") if r.name == "numbers" else r for r in RULES)
    monkeypatch.setattr(versions, "RULES", bumped)
    monkeypatch.setattr(versions, "BY_NAME", {r.name: r for r in bumped})
    after = keys()
    assert set(before) == {"faithfulness", "factual_correctness"}
    assert all(after[m] != before[m] for m in before)
    assert judge_id(Settings(_env_file=None, llm_provider="local")) != name_before  # type: ignore[call-arg]


@pytest.mark.parametrize("metric", ["faithfulness", "factual_correctness"])
def test_the_judged_metrics_carry_the_versions_of_the_rules_they_use(lab_settings, metric):
    from rag_lab.evaluate.run.scorer import Scorer
    from tests.evaluate.judge_doubles import ConstrainedLLM

    class Double(ConstrainedLLM):
        def reply(self, prompt, **kwargs):
            raise AssertionError

    scorer = Scorer(lab_settings.model_copy(update={"llm_provider": "local"}), judge_llm=Double(), metrics=[metric])
    used = scorer._metric(scorer.specs[0]).rule_versions
    expected = {"numbers", "negation", "names", "verbatim", "cells", "evidence", "verdict", "model_verdict", "statements"}
    expected |= {"claims_required"} if metric == "faithfulness" else set()
    assert set(used) == expected and all(used[name] == versions.version_of(name) for name in used)


def test_every_judge_setting_is_declared_and_each_verdict_setting_changes_the_judges_identity(lab_settings):
    from rag_lab.config import Settings
    from rag_lab.evaluate.judge import judge_id
    from rag_lab.evaluate.judge.versions import OTHER_JUDGE_SETTINGS, PROBABILITY_OPTIONS, VERDICT_SETTINGS

    judge_fields = {name for name in Settings.model_fields if name.startswith("judge_")}
    assert judge_fields == set(VERDICT_SETTINGS) | set(OTHER_JUDGE_SETTINGS)  # a new one must be declared
    assert not set(VERDICT_SETTINGS) & set(OTHER_JUDGE_SETTINGS)
    base = lab_settings.model_copy(update={"judge_nli": "probability"})
    other = {"judge_evidence": 5, "judge_numbers": "off", "judge_negation": "off", "judge_names": "off",
             "judge_verbatim": "off", "judge_claims_evidence": "whole", "judge_contrastive": "no-premise",
             "judge_cells": "off", "judge_faithfulness_score": "share"}
    assert set(other) == {name for name, _ in PROBABILITY_OPTIONS}
    for name, value in other.items():
        assert judge_id(base.model_copy(update={name: value})) != judge_id(base), name
    for name in OTHER_JUDGE_SETTINGS[1:]:  # the deadline changes no verdict: the same judge
        assert judge_id(base.model_copy(update={name: 5.0})) == judge_id(base)
