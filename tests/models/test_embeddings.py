"""Cloud embedding providers through their real SDKs, with the transport stubbed."""

from __future__ import annotations

import io
import json

import boto3
import httpx
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from rag_lab.config import load_settings
from rag_lab.errors import ConfigError, ProviderError
from rag_lab.models import embed_model_id, get_embed_model
from rag_lab.models.llm._guard import ProviderAccessError
from rag_lab.models.onnx_embedding import openvino_precision


def test_local_model_is_the_default_and_embeds_offline():
    settings = load_settings(_env_file=None)
    model = get_embed_model(settings)
    vector = model.get_text_embedding("parent share of cost")
    assert len(vector) == 384
    assert abs(sum(v * v for v in vector) - 1.0) < 1e-4  # normalized
    assert embed_model_id(settings) == f"local:sentence-transformers/all-MiniLM-L6-v2+openvino-{openvino_precision()}"


def test_openai_embeddings_over_http(monkeypatch):
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.loads(request.content)
        data = [{"object": "embedding", "index": i, "embedding": [0.1 * (i + 1)] * 4} for i, _ in enumerate(body["input"])]
        return httpx.Response(200, json={"object": "list", "data": data, "model": body["model"],
                                         "usage": {"prompt_tokens": 3, "total_tokens": 3}})

    settings = load_settings(_env_file=None, embed_provider="openai", openai_api_key="sk-test-EMBED")
    model = get_embed_model(settings, http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    vectors = model.get_text_embedding_batch(["a", "b"])
    assert vectors == [[0.1] * 4, [0.2] * 4]
    request = seen[0]
    assert request.url.path.endswith("/embeddings")
    assert json.loads(request.content)["model"] == "text-embedding-3-small"
    assert request.headers["authorization"] == "Bearer sk-test-EMBED"
    assert "sk-test-EMBED" not in repr(model) and "sk-test-EMBED" not in str(model)
    assert "sk-test-EMBED" not in json.dumps(model.to_dict(), default=str)


def test_a_refused_key_is_one_provider_error_without_its_secret():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": {"message": "bad key sk-test-EMBED"}})

    settings = load_settings(_env_file=None, embed_provider="openai", openai_api_key="sk-test-EMBED", max_retries=2)
    model = get_embed_model(settings, http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    with pytest.raises(ProviderAccessError) as caught:
        model.get_query_embedding("parent share of cost")
    assert "openai embedding model 'text-embedding-3-small': authentication failed (HTTP 401)" in str(caught.value)
    assert caught.value.hint == "check OPENAI_API_KEY"
    assert "sk-test-EMBED" not in str(caught.value)


def test_the_sdk_is_the_one_retry_layer():
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503, json={"error": {"message": "busy"}}, headers={"retry-after-ms": "1"})

    settings = load_settings(_env_file=None, embed_provider="openai", openai_api_key="sk-test", max_retries=2)
    model = get_embed_model(settings, http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    with pytest.raises(ProviderError, match=r"server error \(HTTP 503\) after 3 attempt\(s\)"):
        model.get_text_embedding_batch(["a", "b"])
    assert len(calls) == 3  # 1 + max_retries by the SDK; LlamaIndex's tenacity loop around it made that 2 × 3


def test_openai_embeddings_need_a_key():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        get_embed_model(load_settings(_env_file=None, embed_provider="openai"))


def test_bedrock_embeddings_with_stubber(monkeypatch):
    for var, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}.items():
        monkeypatch.setenv(var, value)
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    payload = json.dumps({"embedding": [0.5, 0.25, 0.0], "inputTextTokenCount": 2}).encode()
    with Stubber(client) as stubber:
        stubber.add_response(
            "invoke_model",
            {"body": StreamingBody(io.BytesIO(payload), len(payload)), "contentType": "application/json"},
            {"modelId": "amazon.titan-embed-text-v2:0", "body": stubber_any(), "accept": "application/json",
             "contentType": "application/json"},
        )
        settings = load_settings(_env_file=None, embed_provider="bedrock", aws_region="us-east-1")
        vector = get_embed_model(settings, bedrock_client=client).get_text_embedding("hello")
    assert vector == [0.5, 0.25, 0.0]


def stubber_any():
    from botocore.stub import ANY

    return ANY


def test_bedrock_embeddings_need_a_region():
    with pytest.raises(ConfigError, match="AWS_REGION"):
        get_embed_model(load_settings(_env_file=None, embed_provider="bedrock"))
