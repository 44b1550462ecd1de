"""A warning the library raises for an API call points at the caller's line (``warnings`` shows it
there), not at the library line that noticed, however deep."""

from __future__ import annotations

import warnings

import pytest

from rag_lab import api
from rag_lab.errors import RagLabWarning
from rag_lab.retrieve.tuned_config import TunedConfig

QUESTION = "What is the parent share of cost?"


def _caught(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, RagLabWarning)]


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "fusion", "config": TunedConfig("fusion", provenance={"dataset": "elsewhere"})}, "tuned on elsewhere"),
    ({"mode": "bm25", "fusion_k": 5}, "bm25 takes no fusion_k"),
])
def test_the_warning_names_the_callers_line(texas_index, lab_settings, kwargs, message):
    caught = _caught(lambda: api.search("texas_childcare", QUESTION, settings=lab_settings, **kwargs))
    (warning,) = [w for w in caught if message in str(w.message)]
    assert warning.filename == __file__  # this file, the line calling api.search
    assert "api.search(" in open(__file__, encoding="utf-8").read().splitlines()[warning.lineno - 1]
