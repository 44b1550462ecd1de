"""An embedding server that does not answer: `index` and a query say which server and what to do, in
one line (was: httpx's and openai's ~100-line traceback, exit 1). The real openai SDK against a closed port."""

from __future__ import annotations

import socket

import pytest

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.errors import ProviderError
from rag_lab.index import build_index
from tests.builders import write_folder_dataset


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # free once closed: nothing listens there


def test_an_unreachable_embedding_server_is_named_with_a_hint(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    settings = load_settings(data_dir=tmp_path / "data", embed_provider="openai_compatible", embed_base_url=url,
                             embed_model="bge-small", max_retries=0)
    corpus = write_folder_dataset(tmp_path / "pets", {"cat.txt": "A cat is a pet.\n"})
    with pytest.raises(ProviderError) as caught:
        build_index(resolve_dataset(corpus), settings, progress=False)
    assert (f"openai_compatible embedding model 'bge-small': could not reach the API at {url}/embeddings "
            "after 1 attempt(s)") in str(caught.value)
    assert "RAG_LAB_EMBED_BASE_URL" in caught.value.hint


def test_a_query_embedding_fails_the_same_way(tmp_path):
    from rag_lab.models import get_embed_model

    url = f"http://127.0.0.1:{closed_port()}/v1"
    settings = load_settings(data_dir=tmp_path / "data", embed_provider="openai_compatible", embed_base_url=url,
                             embed_model="bge-small", max_retries=0)
    with pytest.raises(ProviderError, match=f"could not reach the API at {url}/embeddings"):
        get_embed_model(settings).get_query_embedding("is a cat a pet?")


def test_the_cli_prints_it_as_one_error_line(tmp_path, monkeypatch, capsys):
    from rag_lab.cli.main import main
    from rag_lab.config import get_settings

    url = f"http://127.0.0.1:{closed_port()}/v1"
    for name, value in {"RAG_LAB_DATA_DIR": str(tmp_path / "data"), "RAG_LAB_EMBED_PROVIDER": "openai_compatible",
                        "RAG_LAB_EMBED_BASE_URL": url, "RAG_LAB_EMBED_MODEL": "bge-small",
                        "RAG_LAB_MAX_RETRIES": "0"}.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    corpus = write_folder_dataset(tmp_path / "pets", {"cat.txt": "A cat is a pet.\n"})
    try:
        code = main(["index", str(corpus)])
    finally:
        get_settings.cache_clear()
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"error: openai_compatible embedding model 'bge-small': could not reach the API at {url}" in err
