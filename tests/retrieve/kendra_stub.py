"""A fake Amazon Kendra for tests: a *real* boto3 client whose HTTP layer is replaced.

Why not ``botocore.stub.Stubber`` here: Stubber needs one queued response per call, in order,
which does not fit a contract suite that calls ``retriever.retrieve(q)`` any number of times.
Instead :class:`KendraStub` is a ``before-send.kendra.Retrieve`` event handler. botocore runs
everything real up to the wire - parameter validation against the Kendra service model,
serialization, signing (with dummy credentials) - then hands the signed request to the handler,
which answers with an HTTP response built from JSON; botocore's real JSON-protocol parser turns
it into the dict the retriever sees (so e.g. ``LongValue`` really comes back as an ``int``).
Nothing leaves the process.

Usage in any test module::

    from tests.retrieve.kendra_stub import KendraStub, result_item, stubbed_kendra_retriever

    retriever = stubbed_kendra_retriever()             # any query → realistic passages
    nodes = retriever.retrieve("how do I rotate keys?")

    stub = KendraStub({"rotate keys": [result_item("guide.pdf", "Rotate them...", page=3)],
                       "nothing": []})                 # per-query answers (exact QueryText)
    retriever = stub.retriever(top_k=5)
    stub.fail_next("ThrottlingException", times=2)     # the next two calls are throttled
    ...
    assert stub.requests[-1]["PageSize"] == 5          # what the client really sent

    # the retriever contract suite (tests/contracts/conftest.py):
    retriever = contract_kendra_retriever(top_k=5, no_match_query="zqxjv wkpfy qqzzx")

Answers are looked up by the exact ``QueryText`` sent (rag-lab strips the query first); unknown
queries get :func:`realistic_items` (deterministic per query, so ids and scores repeat across
calls and retriever instances). Kendra's behaviour kept: at most ``PageSize`` items, result
``Id`` = ``<QueryId>-<uuid>``. Retrievers built here never sleep between retries.

Clients built here use an isolated boto3 session with dummy credentials, so they work whatever
the developer's ``AWS_PROFILE`` or ``~/.aws`` files say. Tests that build their *own* boto3
client (e.g. for ``Stubber``) can call :func:`set_dummy_aws_env` or use the
:func:`kendra_retriever_factory` fixture (import it into the test module or a conftest).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSResponse

from rag_lab.retrieve.kendra import KendraClient, KendraRetriever, make_kendra_client

#: A syntactically valid Kendra index id (the service model requires 36 characters).
STUB_INDEX_ID = "0f4d3c2b-1a09-4e8f-9a7b-6c5d4e3f2a10"
STUB_REGION = "us-east-1"
DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}

Item = dict[str, Any]
Answer = Sequence[Item] | Callable[[str], Sequence[Item]]


@dataclass(frozen=True)
class KendraFailure:
    """An error answer: the AWS error code, its message and the HTTP status Kendra would use."""

    code: str
    message: str = "simulated failure"
    status: int = 400


def result_item(
    doc_id: str,
    content: str,
    *,
    title: str | None = None,
    uri: str | None = None,
    page: int | None = None,
    confidence: str | None = "HIGH",
    item_id: str | None = None,
    attributes: Mapping[str, Any] | None = None,
) -> Item:
    """One Retrieve ``ResultItem`` as Kendra sends it (JSON field names).

    ``item_id`` defaults to a Kendra-like ``<QueryId>-<uuid>`` filled in by the stub per query.
    ``attributes`` adds further DocumentAttributes: int → LongValue, str → StringValue,
    list → StringListValue, datetime → DateValue.
    """
    item: Item = {"DocumentId": doc_id, "Content": content}
    if item_id is not None:
        item["Id"] = item_id
    if title is not None:
        item["DocumentTitle"] = title
    if uri is not None:
        item["DocumentURI"] = uri
    extra = dict(attributes or {})
    if page is not None:
        extra["_excerpt_page_number"] = page
    if extra:
        item["DocumentAttributes"] = [
            {"Key": key, "Value": _attribute_value(value)} for key, value in extra.items()
        ]
    if confidence is not None:
        item["ScoreAttributes"] = {"ScoreConfidence": confidence}
    return item


# Buckets of a typical answer; note the LOW before MEDIUM: Kendra's buckets are not guaranteed
# monotone in rank, and the retriever must still produce non-increasing scores.
_REALISTIC_BUCKETS = ("VERY_HIGH", "HIGH", "HIGH", "MEDIUM", "LOW", "MEDIUM", "LOW", "LOW")


def realistic_items(query: str, n: int = 12) -> list[Item]:
    """Deterministic, varied passages for any query (PDFs with pages, web pages without)."""
    seed = int(hashlib.sha256(query.encode()).hexdigest(), 16)
    topic = query[:60]  # passages quote a bit of the query, not a 20k-character paste
    items = []
    for i in range(n):
        doc = (seed + i * 7) % 9
        bucket = _REALISTIC_BUCKETS[i] if i < len(_REALISTIC_BUCKETS) else "NOT_AVAILABLE"
        if doc % 3:  # two thirds are PDFs in S3 with a page number
            items.append(result_item(
                f"s3://lab-corpus/manuals/manual-{doc}.pdf",
                f"Passage {i + 1} about {topic!r}: section {doc}.{i} of manual {doc} explains "
                f"the procedure, its prerequisites and the expected outcome.",
                title=f"manual-{doc}.pdf",
                uri=f"https://lab-corpus.s3.amazonaws.com/manuals/manual-{doc}.pdf",
                page=1 + (seed + i) % 40,
                confidence=bucket,
                attributes={"_file_type": "PDF"},
            ))
        else:  # web pages: no page number, sometimes no title (filename from the URI)
            items.append(result_item(
                f"https://wiki.example.com/kb/article-{doc}",
                f"Knowledge-base article {doc} (passage {i + 1}) on {topic!r}.",
                title=None if i % 2 else f"KB article {doc}",
                uri=f"https://wiki.example.com/kb/article-{doc}",
                confidence=bucket,
            ))
    return items


class KendraStub:
    """A ``before-send`` handler answering Kendra Retrieve calls from canned answers.

    ``answers`` maps a QueryText to a list of result items, a :class:`KendraFailure`, or a
    callable ``query -> items``. ``default`` answers every other query.
    """

    def __init__(
        self,
        answers: Mapping[str, Answer | KendraFailure] | None = None,
        *,
        default: Callable[[str], Sequence[Item]] | KendraFailure | None = realistic_items,
    ) -> None:
        self.answers: dict[str, Answer | KendraFailure] = dict(answers or {})
        self.default = default
        self.requests: list[dict[str, Any]] = []  # parsed JSON bodies, in call order
        self._failures: list[KendraFailure] = []

    def fail_next(self, code: str, *, times: int = 1, message: str = "simulated failure",
                  status: int | None = None) -> None:
        """Make the next ``times`` calls (any query) fail; 5xx for InternalServerException."""
        if status is None:
            status = 500 if code == "InternalServerException" else 400
        self._failures.extend([KendraFailure(code, message, status)] * times)

    # -- wiring ------------------------------------------------------------------------------

    def attach(self, client: Any) -> Any:
        client.meta.events.register("before-send.kendra.Retrieve", self)
        return client

    def client(self, region: str = STUB_REGION, request_timeout: float = 5.0) -> KendraClient:
        """A real boto3 kendra client (rag-lab's own config) answered by this stub.

        Built on an isolated session, so a developer's AWS_PROFILE or ~/.aws files can neither
        break it nor leak into it.
        """
        client = make_kendra_client(region, request_timeout, session=_isolated_session(),
                                    **DUMMY_CREDENTIALS)
        return self.attach(client)

    def retriever(self, top_k: int = 10, *, index_id: str = STUB_INDEX_ID,
                  region: str = STUB_REGION, **kwargs: Any) -> KendraRetriever:
        kwargs.setdefault("sleep", lambda _seconds: None)  # retries must not slow tests down
        return KendraRetriever(index_id, region=region, top_k=top_k, client=self.client(region),
                               **kwargs)

    # -- the handler -------------------------------------------------------------------------

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse:
        body = request.body
        payload = json.loads(body.decode() if isinstance(body, bytes) else body or "{}")
        self.requests.append(payload)
        query = payload["QueryText"]
        answer = self._failures.pop(0) if self._failures else self.answers.get(query, self.default)
        if isinstance(answer, KendraFailure):
            return _http_response(
                request, answer.status,
                {"__type": answer.code, "message": answer.message},
                {"x-amzn-ErrorType": answer.code},
            )
        if answer is None:
            raise AssertionError(f"KendraStub has no answer for query {query!r}")
        items = answer(query) if callable(answer) else answer
        query_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"kendra-stub-query:{query}"))
        page_size = min(int(payload.get("PageSize", 10)), 100)
        result_items = [_with_id(item, query_id) for item in list(items)[:page_size]]
        return _http_response(request, 200, {"QueryId": query_id, "ResultItems": result_items})


def stubbed_kendra_retriever(
    responses_for_queries: Mapping[str, Answer | KendraFailure] | None = None,
    *,
    top_k: int = 10,
    **kwargs: Any,
) -> KendraRetriever:
    """A KendraRetriever on a stubbed real client; see the module docstring."""
    return KendraStub(responses_for_queries).retriever(top_k=top_k, **kwargs)


def contract_kendra_retriever(
    top_k: int = 10,
    no_match_query: str | None = None,
    **kwargs: Any,
) -> KendraRetriever:
    """For the retriever contract suite: realistic passages for every query except
    ``no_match_query``, which Kendra answers with no result items."""
    answers: dict[str, Answer | KendraFailure] = {}
    if no_match_query is not None:
        answers[no_match_query.strip()] = []
    return stubbed_kendra_retriever(answers, top_k=top_k, **kwargs)


def set_dummy_aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials, a region, and nothing read from ~/.aws or instance metadata."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL",
                 "AWS_ENDPOINT_URL_KENDRA", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", STUB_REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/rag-lab-test/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/rag-lab-test/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def kendra_retriever_factory(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[..., KendraRetriever]]:
    """Fixture: ``factory(responses_for_queries=None, *, top_k=10, **kwargs) -> KendraRetriever``."""
    set_dummy_aws_env(monkeypatch)
    yield stubbed_kendra_retriever


# -- helpers -----------------------------------------------------------------------------------


def _isolated_session() -> boto3.session.Session:
    # Profile and config files are read from nowhere: environment and ~/.aws do not matter.
    core = botocore.session.Session(session_vars={
        "profile": (None, None, None, None),
        "config_file": (None, None, os.devnull, None),
        "credentials_file": (None, None, os.devnull, None),
    })
    return boto3.session.Session(botocore_session=core)


def _attribute_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        raise TypeError("Kendra document attributes have no boolean type")
    if isinstance(value, int):
        return {"LongValue": value}
    if isinstance(value, str):
        return {"StringValue": value}
    if isinstance(value, dt.datetime):
        return {"DateValue": value}
    if isinstance(value, list):
        return {"StringListValue": [str(v) for v in value]}
    raise TypeError(f"unsupported Kendra attribute value {value!r}")


def _with_id(item: Item, query_id: str) -> Item:
    if "Id" in item:
        return item
    # Kendra's result ids look like "<QueryId>-<uuid>" (73 characters).
    key = f"{item.get('DocumentId')}|{item.get('Content')}"
    return {"Id": f"{query_id}-{uuid.uuid5(uuid.NAMESPACE_URL, key)}", **item}


def _json_default(value: Any) -> Any:
    # The JSON protocol sends timestamps as epoch seconds.
    if isinstance(value, dt.datetime):
        return value.timestamp()
    raise TypeError(f"not JSON serializable: {value!r}")


class _RawBody:
    """The minimal ``raw`` object AWSResponse reads its body from."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data


def _http_response(request: AWSPreparedRequest, status: int, payload: Mapping[str, Any],
                   extra_headers: Mapping[str, str] | None = None) -> AWSResponse:
    data = json.dumps(payload, default=_json_default).encode()
    headers = {
        "x-amzn-RequestId": str(uuid.uuid4()),
        "Content-Type": "application/x-amz-json-1.1",
        "Content-Length": str(len(data)),
        **(extra_headers or {}),
    }
    return AWSResponse(request.url, status, headers, _RawBody(data))


__all__ = [
    "DUMMY_CREDENTIALS",
    "STUB_INDEX_ID",
    "STUB_REGION",
    "KendraFailure",
    "KendraStub",
    "contract_kendra_retriever",
    "kendra_retriever_factory",
    "realistic_items",
    "result_item",
    "set_dummy_aws_env",
    "stubbed_kendra_retriever",
]
