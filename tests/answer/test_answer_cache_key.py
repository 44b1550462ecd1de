"""The answer cache key is derived from the code that makes an answer: change any of what shapes one
(evidence selection and its limits, quoting, the figure grammar and its check, the answer cap,
max_tokens, the prompts, the local model's generation settings) and the key changes with it — no
hand-kept rule string to forget. Each mutation below is one such change; the key must move for each."""

from __future__ import annotations

import re

import pytest

import rag_lab.answer.evidence as evidence
import rag_lab.answer.evidence_answer as evidence_answer
import rag_lab.answer.figures as figures
import rag_lab.models.llm.local_llm as local_llm
from rag_lab.config import Settings
from rag_lab.evaluate.plan import answering
from rag_lab.evaluate.plan.answering import CachedAnswerer, answer_inputs, model_id


def _key() -> str:
    answering.answer_code_hash.cache_clear()
    settings = Settings(_env_file=None, llm_provider="local")
    inputs = answer_inputs(settings, rerank=False, params={}, index="ix")
    return CachedAnswerer("hybrid", lambda: None, model_id=model_id(settings), inputs=inputs, cache=None).key("q?")


@pytest.fixture
def key_before():
    before = _key()
    yield before
    answering.answer_code_hash.cache_clear()




MUTATIONS = [
    ("MAX_UNIT_CHARS", lambda mp: mp.setattr(evidence, "MAX_UNIT_CHARS", 601)),
    ("EVIDENCE_ANSWER_MAX_CHARS (the 300-character cap)",
     lambda mp: mp.setattr(evidence_answer, "EVIDENCE_ANSWER_MAX_CHARS", 299)),
    ("QUOTE_CONTEXT_LINES (a default argument)", lambda mp: mp.setattr(evidence_answer, "QUOTE_CONTEXT_LINES", 2)),
    ("MAX_QUOTED", lambda mp: mp.setattr(evidence_answer, "MAX_QUOTED", 4)),
    ("DEFAULT_EVIDENCE_UNITS", lambda mp: mp.setattr(evidence, "DEFAULT_EVIDENCE_UNITS", 7)),
    ("EVIDENCE_RRF_K", lambda mp: mp.setattr(evidence, "EVIDENCE_RRF_K", 11)),
    ("the evidence prompt", lambda mp: mp.setattr(evidence_answer, "EVIDENCE_PROMPT_TMPL",
                                                   evidence_answer.EVIDENCE_PROMPT_TMPL + " ")),
    ("the figure grammar", lambda mp: mp.setattr(figures, "_FREE_CHAR", r'[^0-9$€£%"\\]')),
    ("the figure check's pattern", lambda mp: mp.setattr(figures, "_WRITTEN", re.compile(r"\d+"))),
]


@pytest.mark.parametrize("name, mutate", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_change_to_what_shapes_an_answer_misses_the_cache(name, mutate, key_before, monkeypatch):
    mutate(monkeypatch)
    assert _key() != key_before, f"{name} changed and the answer cache key did not"
    monkeypatch.undo()
    assert _key() == key_before  # and the key is a function of the code: undone, it is the old key again


def _patch_source(monkeypatch, module, name: str, old: str, new: str) -> None:
    """Change ``module.name``'s code: the key reads a function's source, so the source is what changes."""
    import inspect

    original = inspect.getsource
    target = getattr(module, name)
    changed = original(target).replace(old, new)
    assert changed != original(target), (name, old)
    monkeypatch.setattr(inspect, "getsource", lambda obj: changed if obj is target else original(obj))


@pytest.mark.parametrize("module, name, old, new", [
    (evidence_answer, "answer_from_evidence", "max_tokens=160", "max_tokens=161"),  # generation settings
    (evidence, "line_units", "_mostly_figures(line)", "not _mostly_figures(line)"),  # selection
    (evidence_answer, "_quoted", "MAX_QUOTED", "MAX_QUOTED + 1"),  # quoting
    (figures, "check_answer", "if not unsupported", "if unsupported"),  # the figure check
    (local_llm, "build_local", "settings", "settings "),  # a no-op edit: same syntax, same key
], ids=["max_tokens", "line_units", "quoting", "check_answer", "layout-only"])
def test_a_code_change_misses_the_cache(module, name, old, new, key_before, monkeypatch):
    _patch_source(monkeypatch, module, name, old, new)
    if name == "build_local":
        assert _key() == key_before  # layout is not code
    else:
        assert _key() != key_before


def test_the_hand_kept_rule_strings_are_gone():
    assert not hasattr(evidence, "EVIDENCE_RULE") and not hasattr(evidence_answer, "QUOTE_RULE")
    assert not hasattr(answering, "ANSWER_PATH_REVISION")
