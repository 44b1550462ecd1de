"""A fake Amazon Bedrock Knowledge Base for tests: a real boto3 ``bedrock-agent-runtime`` client whose
HTTP layer answers (a ``before-send`` handler, as :mod:`tests.retrieve.kendra_stub` does for Kendra):
botocore validates, serializes and signs the ``Retrieve`` request, the handler answers with JSON, and
botocore's own REST-JSON parser reads it. Any query gets deterministic passages, best first; the
contract suite's no-match query gets none."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from botocore.awsrequest import AWSResponse

from tests.contracts.conftest import NO_MATCH_QUERY
from tests.retrieve.kendra_stub import _RawBody

KNOWLEDGE_BASE = "KBSTUB0001"
REGION = "us-east-1"
EVENT = "before-send.bedrock-agent-runtime.Retrieve"
FILES = ("handbook.pdf", "rates-2025.pdf", "eligibility.pdf")


def passages(query: str, n: int) -> list[dict[str, Any]]:
    if query == NO_MATCH_QUERY:
        return []
    seed = hashlib.sha256(query.encode()).digest()
    out = []
    for i in range(min(n, 12)):
        name = FILES[(seed[i] + i) % len(FILES)]
        out.append({"content": {"text": f"Passage {i + 1} of {name} about {query[:60]}", "type": "TEXT"},
                    "location": {"type": "S3", "s3Location": {"uri": f"s3://kb-bucket/docs/{name}"}},
                    "metadata": {"x-amz-bedrock-kb-document-page-number": float(1 + seed[i] % 9)},
                    "score": round(0.9 - 0.05 * i, 4)})
    return out


def answer(request, **_: Any) -> AWSResponse:
    body = json.loads(request.body)
    n = body["retrievalConfiguration"]["vectorSearchConfiguration"]["numberOfResults"]
    data = json.dumps({"retrievalResults": passages(body["retrievalQuery"]["text"], n)}).encode()
    headers = {"x-amzn-RequestId": "stub", "Content-Type": "application/json", "Content-Length": str(len(data))}
    return AWSResponse(request.url, 200, headers, _RawBody(data))


def stubbed_session():
    """The default boto3 session with dummy credentials, its Retrieve calls answered here."""
    import boto3

    os.environ.setdefault("BEDROCK_KB_ID", KNOWLEDGE_BASE)
    boto3.setup_default_session(aws_access_key_id="AKIDSTUB", aws_secret_access_key="stub", region_name=REGION)
    boto3.DEFAULT_SESSION.events.register(EVENT, answer)
    return boto3.DEFAULT_SESSION


def contract_client(settings_update: dict[str, Any]) -> dict[str, Any]:
    """The contract suite's ``SERVICE_STUBS`` entry: the service's real client, answered here."""
    return {"client": stubbed_session().client("bedrock-agent-runtime", region_name=REGION)}
