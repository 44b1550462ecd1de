"""Bedrock Converse provider on a real boto3 ``bedrock-runtime`` client, stubbed or fed responses."""

from __future__ import annotations

import json
import types
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import Stubber
from llama_index.core.llms import ChatMessage

from rag_lab.errors import ProviderError
from rag_lab.models.llm import get_llm, track_usage
from rag_lab.models.llm.bedrock_llm import bedrock_runtime_client

MODEL = "amazon.nova-pro-v1:0"
MESSAGES = [ChatMessage(role="system", content="Answer briefly."),
            ChatMessage(role="user", content="What is BM25?")]


def converse_response(text: str, tokens_in: int = 30, tokens_out: int = 6) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": tokens_in, "outputTokens": tokens_out, "totalTokens": tokens_in + tokens_out},
        "metrics": {"latencyMs": 412},
    }


@pytest.fixture(autouse=True)
def dummy_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTESTTESTTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "dummy-secret")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never probe instance metadata


@pytest.fixture
def settings(make_settings):
    return make_settings(llm_provider="bedrock", aws_region="us-east-1", max_retries=2, request_timeout=5)


def test_converse_request_response_and_usage(settings):
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    llm = get_llm(settings, bedrock_client=client)
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response("A ranking function.", 30, 6), expected_params={
            "modelId": MODEL,
            "messages": [{"role": "user", "content": [{"text": "What is BM25?"}]}],
            "system": [{"text": "Answer briefly."}],
            "inferenceConfig": {"maxTokens": 512, "temperature": 0.0},
        })
        with track_usage() as usage:
            response = llm.chat(MESSAGES)
        stub.assert_no_pending_responses()

    assert response.message.content == "A ranking function."
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, usage.calls) == (30, 6, 36, 1)


def test_complete_counts_one_call(settings):
    # BedrockConverse.complete() runs through its own instrumented chat(): two end events, one call.
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    llm = get_llm(settings, bedrock_client=client)
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response("Paris.", 8, 2))
        with track_usage() as usage:
            assert llm.complete("Capital of France?").text == "Paris."
    assert (usage.calls, usage.total_tokens) == (1, 10)


def test_stubbed_throttling_is_a_clear_error_without_extra_retry_layer(settings):
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    llm = get_llm(settings, bedrock_client=client)
    with Stubber(client) as stub:
        # Stubber answers before botocore's retry handler runs, so this reaches LlamaIndex directly:
        # exactly one attempt proves its tenacity layer (4-10 s waits) is off.
        stub.add_client_error("converse", service_error_code="ThrottlingException",
                              service_message="Too many requests, please wait.", http_status_code=429)
        with pytest.raises(ProviderError) as info:
            llm.chat(MESSAGES)
        stub.assert_no_pending_responses()
    assert "throttled (ThrottlingException)" in info.value.message
    assert "Too many requests" in info.value.message


class _Body:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_: Any):
        yield self.data


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch, settings):
    """Our configured client, with HTTP answers scripted below botocore's retry logic."""
    import botocore.endpoint

    sleeps: list[float] = []
    monkeypatch.setattr(botocore.endpoint, "time", types.SimpleNamespace(sleep=sleeps.append))
    client = bedrock_runtime_client(settings)
    script: list[tuple[int, Any]] = []
    sent: list[Any] = []

    def before_send(request: Any, **_: Any) -> AWSResponse:
        sent.append(request)
        status, body = script[min(len(sent), len(script)) - 1]
        headers = {"content-type": "application/json"}
        if status >= 400:
            headers["x-amzn-ErrorType"] = body["__type"]
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        return AWSResponse(request.url, status, headers, _Body(data))

    client.meta.events.register("before-send.bedrock-runtime.Converse", before_send)
    return types.SimpleNamespace(client=client, script=script, sent=sent, sleeps=sleeps)


THROTTLED = (429, {"__type": "ThrottlingException", "message": "Too many requests"})


def test_botocore_retries_throttling_then_succeeds(settings, wire):
    wire.script += [THROTTLED, THROTTLED, (200, converse_response("ok", 5, 1))]
    llm = get_llm(settings, bedrock_client=wire.client)

    assert llm.chat(MESSAGES).message.content == "ok"
    assert len(wire.sent) == 3
    assert wire.sent[0].url == "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse"
    assert len(wire.sleeps) == 2 and all(0 <= s <= 20 for s in wire.sleeps)


def test_persistent_throttling_stops_after_max_retries(settings, wire):
    wire.script.append(THROTTLED)
    llm = get_llm(settings, bedrock_client=wire.client)

    with pytest.raises(ProviderError, match="throttled"):
        llm.chat(MESSAGES)
    assert len(wire.sent) == settings.max_retries + 1


@pytest.mark.parametrize("body", [{"output": "not a message"}, {"usage": {"inputTokens": 1}}, "<html>oops"])
def test_malformed_body_is_a_clear_error(settings, wire, body):
    wire.script.append((200, body))
    llm = get_llm(settings, bedrock_client=wire.client)
    with pytest.raises(ProviderError, match="Bedrock model 'amazon.nova-pro-v1:0': malformed response"):
        llm.chat(MESSAGES)
    assert len(wire.sent) == 1


def test_async_chat_uses_the_same_client(settings):
    import asyncio

    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    llm = get_llm(settings, bedrock_client=client)
    with Stubber(client) as stub:
        stub.add_response("converse", converse_response("async ok", 4, 2))

        async def main():
            with track_usage() as usage:
                response = await llm.achat(MESSAGES)
            return response, usage

        response, usage = asyncio.run(main())
    assert response.message.content == "async ok"
    assert (usage.calls, usage.total_tokens) == (1, 6)
