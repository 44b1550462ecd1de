"""Embedding providers are a table beside the LLM one: a row plus its builder is what the settings
accept, what ``get_embed_model`` builds and what names the vectors; whether a provider runs here is
asked of its row (LLM and embedding alike), never of its name."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag_lab import config
from rag_lab.config import EMBED_PROVIDERS, LLM_PROVIDERS, EmbedProviderSpec, load_settings
from rag_lab.models.embeddings import embed_model_id, get_embed_model


def toy_embedding(settings, **transports):
    """A toy provider's builder: records what it was given."""
    return ("toy", settings.embed_model_name, sorted(transports))


@pytest.fixture
def toy_provider(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no .env
    row = EmbedProviderSpec("toy", f"{__name__}:toy_embedding", "toy-embed-1", endpoint_setting="embed_base_url")
    monkeypatch.setitem(EMBED_PROVIDERS, "toy", row)
    return row


def test_the_rows_and_the_vectors_they_name(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert {name: (spec.default_model, spec.local) for name, spec in EMBED_PROVIDERS.items()} == {
        "local": ("sentence-transformers/all-MiniLM-L6-v2", True), "openai": ("text-embedding-3-small", False),
        "bedrock": ("amazon.titan-embed-text-v2:0", False), "openai_compatible": (None, False)}
    assert embed_model_id(load_settings(embed_provider="openai")) == "openai:text-embedding-3-small"
    assert embed_model_id(load_settings(embed_provider="local", embed_backend="onnx")) == (
        "local:sentence-transformers/all-MiniLM-L6-v2+onnx")
    assert embed_model_id(load_settings(embed_provider="openai_compatible", embed_model="m",
                                        embed_base_url="http://h:1/v1")) == "openai_compatible@http://h:1/v1:m"
    with pytest.raises(Exception, match="'local', 'openai', 'bedrock' or 'openai_compatible'"):
        load_settings(embed_provider="nope")


def test_a_provider_added_as_one_row_is_accepted_built_and_named(toy_provider):
    settings = load_settings(embed_provider="toy", embed_base_url="http://toy:9/v1")
    assert settings.embed_model_name == "toy-embed-1"
    assert get_embed_model(settings) == ("toy", "toy-embed-1", [])
    assert get_embed_model(settings, http_client=object()) == ("toy", "toy-embed-1", ["http_client"])
    assert embed_model_id(settings) == "toy@http://toy:9/v1:toy-embed-1"


def test_is_it_local_is_asked_of_the_provider_row(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert [name for name, spec in LLM_PROVIDERS.items() if spec.local] == ["local"]
    local, remote = load_settings(llm_provider="local"), load_settings(llm_provider="groq")
    assert (local.llm_is_local, local.resolved_answer_style, local.context_lines is not None) == (True, "evidence", True)
    assert (remote.llm_is_local, remote.resolved_answer_style, remote.context_lines) == (False, "free", None)
    monkeypatch.setitem(config.LLM_PROVIDERS, "groq", replace(LLM_PROVIDERS["groq"], local=True))  # the row decides
    assert (remote.llm_is_local, remote.resolved_answer_style, remote.context_lines is not None) == (
        True, "evidence", True)
