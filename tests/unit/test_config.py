"""Settings: defaults, environment variables, `.env`, readable errors, and secrets that never leak."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rag_lab.config import DEFAULT_EMBED_MODELS, DEFAULT_LLM_MODELS, get_settings, load_settings
from rag_lab.errors import ConfigError

SECRETS = {"OPENAI_API_KEY": "sk-SECRET-123", "QDRANT_API_KEY": "qd-SECRET-456", "GROQ_API_KEY": "gsk-SECRET-789"}
PROVIDER_VARS = ("OPENAI_API_KEY", "GROQ_API_KEY", "QDRANT_URL", "QDRANT_API_KEY", "KENDRA_INDEX_ID",
                 "KENDRA_REGION", "AWS_REGION", "AWS_DEFAULT_REGION")


@pytest.fixture(autouse=True)
def clean_env(tmp_path, monkeypatch):
    """No RAG_LAB_* or provider variables from the machine, and a cwd without a `.env`."""
    for name in list(os.environ):
        if name.startswith("RAG_LAB_") or name in PROVIDER_VARS:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_defaults_are_local_and_under_data_dir():
    from rag_lab.index.store import qdrant_target

    settings = load_settings()
    assert (settings.embed_provider, settings.llm_provider) == ("local", "local")
    assert settings.embed_model_name == DEFAULT_EMBED_MODELS["local"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert settings.llm_model_name == DEFAULT_LLM_MODELS["local"]
    assert settings.data_dir == Path(".rag_lab") and settings.datasets_dir == Path("datasets")
    assert settings.qdrant_url is None and settings.qdrant_api_key is None
    assert qdrant_target(settings) == str(Path(".rag_lab") / "qdrant")
    assert settings.index_dir == Path(".rag_lab/indexes") and settings.cache_dir == Path(".rag_lab/cache")
    assert (settings.chunk_words, settings.chunk_overlap_words) == (500, 0)
    assert settings.openai_api_key is None and settings.kendra_index_id is None
    assert get_settings() is get_settings()  # cached


def test_environment_variables_are_read(monkeypatch, tmp_path):
    from rag_lab.index.store import qdrant_target

    env = {
        "RAG_LAB_LLM_PROVIDER": "openai", "RAG_LAB_DATA_DIR": str(tmp_path / "d"), "RAG_LAB_CHUNK_WORDS": "300",
        "OPENAI_API_KEY": "sk-test", "QDRANT_URL": "http://qdrant.internal:6333",
        "KENDRA_INDEX_ID": "0123456789abcdef0123456789abcdef0123", "AWS_REGION": "eu-west-1",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.llm_provider == "openai" and settings.llm_model_name == DEFAULT_LLM_MODELS["openai"]
    assert settings.data_dir == tmp_path / "d" and settings.chunk_words == 300
    assert settings.openai_api_key.get_secret_value() == "sk-test"
    assert settings.qdrant_url == qdrant_target(settings) == "http://qdrant.internal:6333"
    assert settings.kendra_index_id == env["KENDRA_INDEX_ID"]
    assert settings.aws_region == settings.kendra_region_name == "eu-west-1"
    monkeypatch.setenv("KENDRA_REGION", "us-east-1")
    assert load_settings().kendra_region_name == "us-east-1"  # its own region wins over AWS_REGION


def test_aws_default_region_and_blank_values(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    monkeypatch.setenv("QDRANT_URL", "  ")
    monkeypatch.setenv("KENDRA_INDEX_ID", "")
    settings = load_settings()
    assert settings.aws_region == "ap-south-1"
    assert settings.qdrant_url is None and settings.kendra_index_id is None  # blank means unset


def test_dotenv_in_cwd_is_read_and_environment_wins(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text(
        "RAG_LAB_LLM_PROVIDER=groq\nGROQ_API_KEY=gsk-from-dotenv\nQDRANT_URL=http://dotenv:6333\n"
        "RAG_LAB_EMBED_BATCH_SIZE=8\nUNRELATED=1\n",
        encoding="utf-8",
    )
    settings = load_settings()
    assert settings.llm_provider == "groq"
    assert settings.groq_api_key.get_secret_value() == "gsk-from-dotenv"
    assert settings.qdrant_url == "http://dotenv:6333" and settings.embed_batch_size == 8
    monkeypatch.setenv("RAG_LAB_LLM_PROVIDER", "bedrock")
    assert load_settings().llm_provider == "bedrock"
    monkeypatch.chdir(tmp_path.parent)  # elsewhere, that .env does not apply
    assert load_settings().llm_provider == "bedrock" and load_settings().groq_api_key is None


def test_overrides_beat_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_LAB_DATA_DIR", "/elsewhere")
    assert load_settings(data_dir=tmp_path).data_dir == tmp_path


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("RAG_LAB_LLM_PROVIDER", "nope", r"RAG_LAB_LLM_PROVIDER: Input should be 'local', 'openai', 'groq', 'bedrock' or 'openai_compatible' \(got 'nope'\)"),
        ("RAG_LAB_EMBED_PROVIDER", "cohere", r"RAG_LAB_EMBED_PROVIDER: .*'local', 'openai', 'bedrock' or 'openai_compatible'"),
        ("RAG_LAB_CHUNK_WORDS", "-1", r"RAG_LAB_CHUNK_WORDS: Input should be greater than or equal to 20 \(got '-1'\)"),
        ("RAG_LAB_CHUNK_WORDS", "abc", r"RAG_LAB_CHUNK_WORDS: Input should be a valid integer"),
        ("RAG_LAB_LLM_TEMPERATURE", "3", r"RAG_LAB_LLM_TEMPERATURE: Input should be less than or equal to 2"),
    ],
)
def test_bad_values_are_one_readable_config_error(monkeypatch, name, value, expected):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=expected) as info:
        load_settings()
    message = str(info.value)
    assert message.startswith("Invalid configuration: ")
    assert "fix the environment variable or the .env entry" in message
    assert "Traceback" not in message and "pydantic" not in message.lower()
    with pytest.raises(ConfigError):
        get_settings()


@pytest.mark.parametrize(("size", "overlap"), [("100", "100"), ("100", "150")])
def test_overlap_not_below_size_is_a_config_error(monkeypatch, size, overlap):
    monkeypatch.setenv("RAG_LAB_CHUNK_WORDS", size)
    monkeypatch.setenv("RAG_LAB_CHUNK_OVERLAP_WORDS", overlap)
    with pytest.raises(ConfigError, match=rf"chunk_overlap_words \({overlap}\) must be smaller than chunk_words \({size}\)"):
        load_settings()
    monkeypatch.setenv("RAG_LAB_CHUNK_OVERLAP_WORDS", "99")
    assert load_settings().chunk_overlap_words == 99


def _set_secrets(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)


def test_secrets_are_loaded_but_never_shown(monkeypatch):
    _set_secrets(monkeypatch)
    monkeypatch.setenv("QDRANT_URL", "https://cluster.example:6333")
    settings = load_settings()
    assert settings.openai_api_key.get_secret_value() == SECRETS["OPENAI_API_KEY"]
    assert settings.qdrant_api_key.get_secret_value() == SECRETS["QDRANT_API_KEY"]
    assert settings.groq_api_key.get_secret_value() == SECRETS["GROQ_API_KEY"]
    dumped = settings.model_dump_json()
    shown = [repr(settings), str(settings), dumped, str(settings.model_dump())]
    for text in shown:
        for secret in SECRETS.values():
            assert secret not in text
    assert '"openai_api_key":"**********"' in dumped
    from rag_lab.index.store import qdrant_target

    assert SECRETS["QDRANT_API_KEY"] not in qdrant_target(settings)


@pytest.mark.parametrize(
    "bad",
    [
        {"RAG_LAB_CHUNK_OVERLAP_WORDS": "600"},  # a cross-field check sees every input
        {"RAG_LAB_LLM_PROVIDER": "nope"},
        {"RAG_LAB_CHUNK_WORDS": "abc"},
    ],
)
def test_secrets_never_appear_in_config_errors(monkeypatch, bad):
    _set_secrets(monkeypatch)
    for name, value in bad.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    for secret in SECRETS.values():
        assert secret not in str(info.value)
        assert secret not in repr(info.value)


def test_secrets_passed_as_overrides_stay_hidden_in_errors():
    with pytest.raises(ConfigError) as info:
        load_settings(openai_api_key="sk-SECRET-123", chunk_words=50, chunk_overlap_words=50)
    assert "sk-SECRET-123" not in str(info.value)

