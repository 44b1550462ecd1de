"""A Qdrant server/cluster (QDRANT_URL): the collection a build creates carries the shards,
replication factor and write consistency set by RAG_LAB_QDRANT_SHARDS / _REPLICATION_FACTOR /
_WRITE_CONSISTENCY, and nothing when they are unset (the server's defaults). Driven through the real
qdrant-client over HTTP against a fake Qdrant REST endpoint on 127.0.0.1 that records the request."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rag_lab.config import load_settings
from rag_lab.index.open import create_writer
from rag_lab.index.paths import IndexPaths


class _FakeQdrant:
    def __init__(self) -> None:
        self.created: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _reply(self, result) -> None:
                body = json.dumps({"result": result, "status": "ok", "time": 0.0}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.endswith("/exists"):
                    return self._reply({"exists": False})
                body = json.dumps({"title": "qdrant", "version": "1.15.0"}).encode()  # the client's version check
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_PUT(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                fake.created.append({"path": self.path, "body": json.loads(self.rfile.read(length) or b"{}")})
                self._reply(True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_qdrant():
    server = _FakeQdrant()
    yield server
    server.close()


def _writer(tmp_path, url, **layout):
    from rag_lab.datasets import resolve_dataset
    from tests.conftest import REPO

    settings = load_settings(data_dir=tmp_path, datasets_dir=REPO / "datasets", qdrant_url=url, request_timeout=10,
                             **layout)
    paths = IndexPaths.for_dataset(settings, resolve_dataset("texas_childcare", settings.datasets_dir))
    assert paths.backend == "server"
    create_writer(settings, paths, "texas_childcare__gen", 384)


def test_a_server_collection_gets_the_configured_shards_replicas_and_write_consistency(tmp_path, fake_qdrant):
    from rag_lab.index.store import close_all

    try:
        _writer(tmp_path, fake_qdrant.url, qdrant_shards=6, qdrant_replication_factor=2, qdrant_write_consistency=2)
    finally:
        close_all()
    (created,) = fake_qdrant.created
    assert created["path"].startswith("/collections/texas_childcare__gen")
    body = created["body"]
    assert (body["shard_number"], body["replication_factor"], body["write_consistency_factor"]) == (6, 2, 2)
    assert body["vectors"]["dense"]["size"] == 384 and body["vectors"]["dense"]["distance"] == "Cosine"


def test_unset_layout_leaves_the_server_defaults(tmp_path, fake_qdrant):
    from rag_lab.index.store import close_all

    try:
        _writer(tmp_path, fake_qdrant.url)
    finally:
        close_all()
    (created,) = fake_qdrant.created
    assert not {"shard_number", "replication_factor", "write_consistency_factor"} & set(created["body"])


def test_the_layout_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("RAG_LAB_QDRANT_SHARDS", "4")
    monkeypatch.setenv("RAG_LAB_QDRANT_REPLICATION_FACTOR", "3")
    monkeypatch.setenv("RAG_LAB_QDRANT_WRITE_CONSISTENCY", "2")
    settings = load_settings()
    assert (settings.qdrant_shards, settings.qdrant_replication_factor, settings.qdrant_write_consistency) == (4, 3, 2)
