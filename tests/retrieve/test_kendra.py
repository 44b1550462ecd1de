"""KendraRetriever against a real boto3 kendra client: Stubber for exact request/response pairs,
the ``before-send`` stub (kendra_stub.py) for repeated calls through botocore's real parser."""

from __future__ import annotations

import uuid
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from rag_lab.config import Settings
from rag_lab.errors import ConfigError, ProviderError
from rag_lab.retrieve.base import REQUIRED_METADATA
from rag_lab.retrieve.kendra import (
    NOT_CONFIGURED_MESSAGE,
    KendraRetriever,
)
from rag_lab.retrieve.kendra_results import CONFIDENCE_SCORES

try:
    from tests.retrieve.kendra_stub import (
        STUB_INDEX_ID,
        KendraFailure,
        KendraStub,
        kendra_retriever_factory,  # noqa: F401  (fixture, used by name)
        result_item,
        set_dummy_aws_env,
    )
except ImportError:  # pytest run without the repository root on sys.path
    from kendra_stub import (  # type: ignore[no-redef]
        STUB_INDEX_ID,
        KendraFailure,
        KendraStub,
        kendra_retriever_factory,  # noqa: F401
        result_item,
        set_dummy_aws_env,
    )

INDEX_ID = STUB_INDEX_ID
QUERY_ID = "9b2f5f3e-3c1a-4c51-9a3e-1d0e6f1b2a77"


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    set_dummy_aws_env(monkeypatch)


@pytest.fixture
def stubbed(aws_env: None) -> Any:
    client = boto3.client("kendra", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


class Sleeps(list):
    """A sleep function that records instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(client: Any, **kwargs: Any) -> KendraRetriever:
    kwargs.setdefault("top_k", 3)
    kwargs.setdefault("sleep", Sleeps())
    return KendraRetriever(INDEX_ID, region="us-east-1", client=client, **kwargs)


def item(n: int, **overrides: Any) -> dict[str, Any]:
    base = result_item(
        f"s3://corpus/doc-{n}.pdf",
        f"content {n}",
        item_id=f"{QUERY_ID}-0000000{n}-aaaa-bbbb-cccc-dddddddddddd",
        title=f"Doc {n}.pdf",
        uri=f"https://corpus.s3.amazonaws.com/doc-{n}.pdf",
        page=n + 10,
        confidence="HIGH",
    )
    base.update(overrides)
    return base


def params(query: str = "what is rag", page_size: int = 3, **extra: Any) -> dict[str, Any]:
    return {"IndexId": INDEX_ID, "QueryText": query, "PageSize": page_size, **extra}


# -- requests ------------------------------------------------------------------------------------


def test_request_parameters_are_validated_by_the_service_model(stubbed: Any) -> None:
    client, stubber = stubbed
    # Leading/trailing blanks are stripped by LabRetriever before Kendra sees the query.
    stubber.add_response("retrieve", {"QueryId": QUERY_ID, "ResultItems": [item(1)]},
                         params("what is rag"))
    nodes = make(client).retrieve("  what is rag \n")
    assert len(nodes) == 1


def test_attribute_filter_is_passed_through(stubbed: Any) -> None:
    client, stubber = stubbed
    attribute_filter = {"AndAllFilters": [
        {"EqualsTo": {"Key": "_language_code", "Value": {"StringValue": "en"}}},
        {"GreaterThanOrEquals": {"Key": "_view_count", "Value": {"LongValue": 3}}},
    ]}
    stubber.add_response("retrieve", {"ResultItems": []},
                         params(AttributeFilter=attribute_filter))
    assert make(client, attribute_filter=attribute_filter).retrieve("what is rag") == []


def test_page_size_is_capped_at_kendra_maximum(stubbed: Any) -> None:
    client, stubber = stubbed
    stubber.add_response("retrieve", {"ResultItems": []}, params(page_size=100))
    assert make(client, top_k=250).retrieve("what is rag") == []


def test_empty_query_is_rejected_before_calling_kendra(stubbed: Any) -> None:
    client, _ = stubbed  # no queued response: any call would fail the test
    with pytest.raises(ValueError, match="query is empty"):
        make(client).retrieve("   ")


# -- mapping -------------------------------------------------------------------------------------


def test_items_map_to_nodes_in_kendra_order(stubbed: Any) -> None:
    client, stubber = stubbed
    items = [
        item(1, ScoreAttributes={"ScoreConfidence": "VERY_HIGH"}),
        item(2),
        item(3, ScoreAttributes={"ScoreConfidence": "MEDIUM"}),
    ]
    stubber.add_response("retrieve", {"QueryId": QUERY_ID, "ResultItems": items}, params())

    nodes = make(client).retrieve("what is rag")

    assert [n.node.get_content() for n in nodes] == ["content 1", "content 2", "content 3"]
    first = nodes[0].node.metadata
    assert first["doc_id"] == "s3://corpus/doc-1.pdf"
    assert first["chunk_id"] == items[0]["Id"]
    assert first["filename"] == "Doc 1.pdf"
    assert first["title"] == "Doc 1.pdf"
    assert first["source_url"] == "https://corpus.s3.amazonaws.com/doc-1.pdf"
    assert first["page"] == 11
    assert first["kendra_query_id"] == QUERY_ID
    assert [n.node.metadata["kendra_rank"] for n in nodes] == [1, 2, 3]
    assert [n.node.metadata["kendra_confidence"] for n in nodes] == ["VERY_HIGH", "HIGH", "MEDIUM"]
    for result in nodes:
        assert set(REQUIRED_METADATA) <= set(result.node.metadata)
    scores = [n.score for n in nodes]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 3
    assert scores[0] == CONFIDENCE_SCORES["VERY_HIGH"]
    # Bucket still readable from the score (tie-breaker < 0.01).
    assert [round(s * 4) / 4 for s in scores] == [1.0, 0.75, 0.5]
    # Ranking bookkeeping is hidden from the LLM; ids are hidden by LabRetriever.
    assert "kendra_rank" in nodes[0].node.excluded_llm_metadata_keys
    assert "chunk_id" in nodes[0].node.excluded_llm_metadata_keys


def test_node_ids_are_stable_uuid5_of_the_result_id(stubbed: Any) -> None:
    client, stubber = stubbed
    response = {"QueryId": QUERY_ID, "ResultItems": [item(1), item(2)]}
    stubber.add_response("retrieve", response, params())
    stubber.add_response("retrieve", response, params())
    retriever = make(client)

    first = [n.node.node_id for n in retriever.retrieve("what is rag")]
    second = [n.node.node_id for n in retriever.retrieve("what is rag")]

    assert first == second and len(set(first)) == 2
    assert all(uuid.UUID(node_id).version == 5 for node_id in first)


def test_same_passage_from_another_query_is_the_same_node(stubbed: Any) -> None:
    client, stubber = stubbed
    stubber.add_response("retrieve", {"QueryId": QUERY_ID, "ResultItems": [item(1)]}, params())
    other = dict(item(1), Id="another-query-id-result-1")
    stubber.add_response("retrieve", {"QueryId": "another-query-id", "ResultItems": [other]}, params())
    retriever = make(client)
    [first] = retriever.retrieve("what is rag")
    [second] = retriever.retrieve("what is rag")
    assert first.node.metadata["chunk_id"] != second.node.metadata["chunk_id"]
    assert first.node.node_id == second.node.node_id


def test_scores_never_increase_even_when_buckets_do(stubbed: Any) -> None:
    client, stubber = stubbed
    items = [
        item(1, ScoreAttributes={"ScoreConfidence": "HIGH"}),
        item(2, ScoreAttributes={"ScoreConfidence": "VERY_HIGH"}),  # better bucket, worse rank
        item(3, ScoreAttributes={"ScoreConfidence": "LOW"}),
        item(4, ScoreAttributes={"ScoreConfidence": "NOT_AVAILABLE"}),
    ]
    items[4 - 1].pop("ScoreAttributes")  # a missing ScoreAttributes counts as NOT_AVAILABLE
    stubber.add_response("retrieve", {"ResultItems": items}, params(page_size=4))

    nodes = make(client, top_k=4).retrieve("what is rag")

    scores = [n.score for n in nodes]
    assert all(a > b for a, b in zip(scores, scores[1:]))
    assert [n.node.metadata["kendra_confidence"] for n in nodes] == [
        "HIGH", "VERY_HIGH", "LOW", "NOT_AVAILABLE"]
    assert [n.node.metadata["doc_id"] for n in nodes] == [f"s3://corpus/doc-{i}.pdf" for i in (1, 2, 3, 4)]


def test_filename_falls_back_to_the_uri_and_page_to_none(stubbed: Any) -> None:
    client, stubber = stubbed
    no_title = item(1)
    del no_title["DocumentTitle"], no_title["DocumentAttributes"]
    no_title["DocumentURI"] = "https://wiki.example.com/kb/Setup%20Guide.html?x=1"
    bare = {"Id": f"{QUERY_ID}-2", "DocumentId": "doc-without-uri", "Content": "bare"}
    other_attrs = item(3, DocumentAttributes=[
        {"Key": "_file_type", "Value": {"StringValue": "PDF"}}])
    stubber.add_response("retrieve", {"ResultItems": [no_title, bare, other_attrs]}, params())

    nodes = make(client).retrieve("what is rag")

    meta = [n.node.metadata for n in nodes]
    assert meta[0]["filename"] == "Setup Guide.html" and meta[0]["title"] is None
    assert meta[0]["page"] is None
    assert meta[1]["filename"] == "doc-without-uri" and meta[1]["source_url"] is None
    assert meta[2]["page"] is None


def test_no_result_items_is_an_empty_list(stubbed: Any) -> None:
    client, stubber = stubbed
    stubber.add_response("retrieve", {"QueryId": QUERY_ID, "ResultItems": []}, params())
    assert make(client).retrieve("what is rag") == []


# -- errors and retries -------------------------------------------------------------------------


def test_throttling_then_success_is_retried(stubbed: Any) -> None:
    client, stubber = stubbed
    stubber.add_client_error("retrieve", "ThrottlingException", "Rate exceeded",
                             expected_params=params())
    stubber.add_response("retrieve", {"ResultItems": [item(1)]}, params())
    sleeps = Sleeps()

    nodes = make(client, sleep=sleeps).retrieve("what is rag")

    assert [n.node.metadata["doc_id"] for n in nodes] == ["s3://corpus/doc-1.pdf"]
    assert len(sleeps) == 1


def test_persistent_throttling_fails_after_bounded_attempts(stubbed: Any) -> None:
    client, stubber = stubbed
    for _ in range(4):
        stubber.add_client_error("retrieve", "ThrottlingException", "Rate exceeded")
    sleeps = Sleeps()
    retriever = make(client, sleep=sleeps, max_retries=3, backoff_base=0.5, backoff_cap=1.0)

    with pytest.raises(ProviderError) as caught:
        retriever.retrieve("what is rag")

    error = caught.value
    assert "Kendra" in error.message and INDEX_ID in error.message
    assert "4 attempts" in error.message
    assert error.hint and "capacity" in error.hint
    assert len(sleeps) == 3 and all(0 < s <= 1.0 for s in sleeps)


def test_server_errors_are_retried_then_reported(stubbed: Any) -> None:
    client, stubber = stubbed
    for _ in range(2):
        stubber.add_client_error("retrieve", "InternalServerException", "boom",
                                 http_status_code=500)
    sleeps = Sleeps()

    with pytest.raises(ProviderError, match="did not answer after 2 attempts") as caught:
        make(client, sleep=sleeps, max_retries=1).retrieve("what is rag")

    assert "InternalServerException" in caught.value.message
    assert len(sleeps) == 1


@pytest.mark.parametrize(
    ("code", "status", "fragment"),
    [
        ("AccessDeniedException", 403, "denied access"),
        ("ResourceNotFoundException", 400, "was not found"),
        ("ValidationException", 400, "rejected the request"),
    ],
)
def test_other_client_errors_fail_at_once(stubbed: Any, code: str, status: int,
                                          fragment: str) -> None:
    client, stubber = stubbed
    stubber.add_client_error("retrieve", code, "nope", http_status_code=status)
    sleeps = Sleeps()

    with pytest.raises(ProviderError) as caught:
        make(client, sleep=sleeps).retrieve("what is rag")

    assert fragment in caught.value.message and INDEX_ID in caught.value.message
    assert "Kendra" in caught.value.message and caught.value.hint
    assert sleeps == []


def test_rejected_credentials_are_a_config_error(stubbed: Any) -> None:
    client, stubber = stubbed
    stubber.add_client_error("retrieve", "UnrecognizedClientException",
                             "The security token included in the request is invalid.")
    with pytest.raises(ConfigError, match="credentials"):
        make(client).retrieve("what is rag")


def test_missing_credentials_are_a_config_error(aws_env: None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    # A fresh session: boto3's default session caches credentials resolved by earlier tests.
    client = boto3.session.Session().client("kendra", region_name="us-east-1")

    def never_send(**_: Any) -> None:
        raise AssertionError("a request was sent without credentials")

    client.meta.events.register("before-send.kendra.Retrieve", never_send)

    with pytest.raises(ConfigError) as caught:
        make(client).retrieve("what is rag")
    assert "AWS credentials" in caught.value.message
    assert "AWS_ACCESS_KEY_ID" in (caught.value.hint or "")


# -- configuration ------------------------------------------------------------------------------


def test_not_configured_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KENDRA_INDEX_ID", raising=False)
    settings = Settings(_env_file=None, kendra_index_id=None)

    with pytest.raises(ConfigError) as caught:
        KendraRetriever.from_settings(settings)

    assert caught.value.message == NOT_CONFIGURED_MESSAGE
    assert caught.value.message == (
        "Kendra is not configured: set KENDRA_INDEX_ID (and AWS credentials)")
    assert caught.value.hint


def test_from_settings_builds_a_client_with_lab_timeouts(aws_env: None) -> None:
    settings = Settings(_env_file=None, kendra_index_id=INDEX_ID, kendra_region="eu-west-1",
                        request_timeout=12.5, max_retries=2)

    retriever = KendraRetriever.from_settings(settings, top_k=7)

    client: Any = retriever.client
    assert client.meta.region_name == "eu-west-1"
    assert client.meta.config.connect_timeout == 12.5
    assert client.meta.config.read_timeout == 12.5
    # botocore must not retry on top of our own loop (max_attempts=0 → 1 attempt in total).
    assert client.meta.config.retries["total_max_attempts"] == 1
    assert retriever.max_retries == 2 and retriever.top_k == 7
    assert retriever.mode == "kendra"


@pytest.mark.parametrize("bad_id", ["my-index", "x" * 37])
def test_a_malformed_index_id_is_a_config_error(bad_id: str) -> None:
    with pytest.raises(ConfigError, match="not a Kendra index id"):
        KendraRetriever(bad_id, client=object())  # type: ignore[arg-type]


# -- the reusable stub (real client, botocore's real parsing) ----------------------------------


def test_stub_answers_repeated_queries(kendra_retriever_factory: Any) -> None:
    stub = KendraStub({
        "alpha": [result_item("a.pdf", "alpha text", title="a.pdf", page=4, confidence="HIGH")],
        "nothing": [],
    })
    retriever = stub.retriever(top_k=5)

    for _ in range(3):
        nodes = retriever.retrieve("alpha")
        assert [n.node.get_content() for n in nodes] == ["alpha text"]
        assert nodes[0].node.metadata["page"] == 4  # parsed from JSON by botocore
    assert retriever.retrieve("nothing") == []
    other = retriever.retrieve("anything else")
    assert len(other) == 5  # PageSize honoured
    scores = [n.score for n in other]
    assert all(a > b for a, b in zip(scores, scores[1:]))
    assert all(set(REQUIRED_METADATA) <= set(n.node.metadata) for n in other)
    assert [r["QueryText"] for r in stub.requests] == ["alpha"] * 3 + ["nothing", "anything else"]
    assert all(r["IndexId"] == INDEX_ID and r["PageSize"] == 5 for r in stub.requests)


def test_stub_factory_fixture_and_failures(kendra_retriever_factory: Any) -> None:
    retriever = kendra_retriever_factory({"boom": KendraFailure("AccessDeniedException", "no")},
                                         top_k=3)
    assert len(retriever.retrieve("a question")) == 3
    with pytest.raises(ProviderError, match="denied access"):
        retriever.retrieve("boom")

    stub = KendraStub()
    retriever = stub.retriever(top_k=2)
    stub.fail_next("ThrottlingException", times=2)
    assert len(retriever.retrieve("throttled twice")) == 2
    assert len(stub.requests) == 3


def test_connection_failures_are_retried_then_reported() -> None:
    from botocore.exceptions import EndpointConnectionError

    class Unreachable:
        calls = 0

        def retrieve(self, **_: Any) -> dict[str, Any]:
            self.calls += 1
            raise EndpointConnectionError(endpoint_url="https://kendra.us-east-1.amazonaws.com/")

    client = Unreachable()
    sleeps = Sleeps()
    with pytest.raises(ProviderError, match="did not answer after 3 attempts"):
        make(client, sleep=sleeps, max_retries=2).retrieve("what is rag")
    assert client.calls == 3 and len(sleeps) == 2


def test_stub_items_survive_real_parsing_and_serialize(kendra_retriever_factory: Any) -> None:
    import datetime as dt

    when = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
    retriever = kendra_retriever_factory({"dated": [result_item(
        "d.pdf", "dated text", page=2, attributes={"_created_at": when, "_authors": ["a", "b"]})]})

    (result,) = retriever.retrieve("dated")

    assert result.node.metadata["page"] == 2
    assert result.node.metadata["filename"] == "d.pdf"  # no title, no URI: the DocumentId
    result.node.model_dump_json()  # metadata stays JSON-serializable (persisted runs)


def test_very_long_queries_are_cut_at_a_word_boundary() -> None:
    from rag_lab.retrieve.kendra import MAX_QUERY_CHARS

    stub = KendraStub()
    retriever = stub.retriever(top_k=3)
    retriever.retrieve(" ".join(["childcare"] * 5000))
    sent = stub.requests[-1]["QueryText"]
    assert len(sent) <= MAX_QUERY_CHARS and sent.split() == ["childcare"] * len(sent.split())


def test_contract_retriever_no_match_and_determinism() -> None:
    try:
        from tests.retrieve.kendra_stub import contract_kendra_retriever
    except ImportError:  # pragma: no cover - see the import at the top
        from kendra_stub import contract_kendra_retriever  # type: ignore[no-redef]

    no_match = "zqxjv wkpfy qqzzx"
    first = contract_kendra_retriever(top_k=5, no_match_query=no_match)
    second = contract_kendra_retriever(top_k=5, no_match_query=no_match)
    assert first.retrieve(no_match) == []
    a, b = first.retrieve("parent share of cost"), second.retrieve("parent share of cost")
    assert [r.node.node_id for r in a] == [r.node.node_id for r in b]
    assert [r.score for r in a] == [r.score for r in b]
    with pytest.raises(ValueError, match="top_k"):
        contract_kendra_retriever(top_k=0)


def test_stub_clients_ignore_the_developers_aws_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_PROFILE", "a-profile-that-does-not-exist")
    assert len(KendraStub().retriever(top_k=2).retrieve("anything")) == 2
