"""Amazon Kendra as a rag-lab retriever, through the **Retrieve** API (boto3).

Retrieve returns passages (up to ~200 tokens) in Kendra's relevance order, at most 100 per call
(``PageSize``). Each result item becomes a ``TextNode`` whose metadata follows the rag-lab
contract (``doc_id``, ``chunk_id``, ``filename``, ``page``) plus ``title``, ``source_url``,
``kendra_rank`` (1-based, Kendra's order), ``kendra_confidence`` and ``kendra_query_id``.
Queries are cut to :data:`MAX_QUERY_CHARS` (Kendra itself only reads the first 30 tokens).

Errors
------
Throttling, Kendra's 5xx and connection failures are retried by this class (bounded exponential
backoff with jitter; the sleep function is injectable). botocore's own retries are switched off
on clients created here, so the number of attempts is exactly ``1 + max_retries`` rather than the
product of two retry loops. Everything else fails at once as a :class:`ProviderError` that names
Kendra, the index and what to do; missing credentials or region are a :class:`ConfigError`.

Result items become nodes in :mod:`rag_lab.retrieve.kendra_results` (scores, identity).
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from llama_index.core.schema import NodeWithScore

from rag_lab.errors import ConfigError, ProviderError
from rag_lab.retrieve.base import LabRetriever
from rag_lab.retrieve.kendra_results import result_nodes

if TYPE_CHECKING:
    from rag_lab.config import Settings

logger = logging.getLogger(__name__)

#: Kendra's Retrieve returns at most 100 passages per page.
MAX_PAGE_SIZE = 100
#: Kendra only uses the first 30 tokens of a query (service docs); we cut what we send to this many
#: characters so a pasted document cannot turn into a rejected request.
MAX_QUERY_CHARS = 1_000
NOT_CONFIGURED_MESSAGE = "Kendra is not configured: set KENDRA_INDEX_ID (and AWS credentials)"
_CONFIG_HINT = (
    "KENDRA_INDEX_ID is the 36-character id of an existing Kendra index; also set KENDRA_REGION "
    "(or AWS_REGION) to the index's region and AWS credentials (AWS_ACCESS_KEY_ID + "
    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
)
_CREDENTIALS_HINT = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary "
    "credentials), or AWS_PROFILE, for an identity allowed to call kendra:Retrieve"
)

# Kendra index ids are UUIDs; the service model requires exactly 36 characters of this pattern.
_INDEX_ID_RE = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9-]{35}")
# Error codes worth another attempt (besides any HTTP 5xx).
_RETRYABLE_CODES = frozenset(
    {"ThrottlingException", "Throttling", "TooManyRequestsException", "InternalServerException",
     "ServiceUnavailable", "ServiceUnavailableException", "RequestTimeout", "RequestTimeoutException"}
)
_BAD_CREDENTIAL_CODES = frozenset(
    {"UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException",
     "ExpiredToken", "InvalidClientTokenId", "MissingAuthenticationToken"}
)


class KendraClient(Protocol):
    """The slice of boto3's ``kendra`` client this module uses."""

    def retrieve(self, **kwargs: Any) -> dict[str, Any]: ...


def make_kendra_client(
    region: str | None = None,
    request_timeout: float = 60.0,
    *,
    session: Any | None = None,
    **client_kwargs: Any,
) -> KendraClient:
    """A boto3 ``kendra`` client with rag-lab's timeouts and botocore retries switched off.

    ``session`` is an optional ``boto3.session.Session`` (e.g. for a named profile); by default
    boto3's default session is used. ``client_kwargs`` go to ``client()`` (e.g. credentials).
    """
    import boto3  # imported here: only Kendra users pay for boto3's import time
    from botocore.config import Config
    from botocore.exceptions import NoRegionError

    config = Config(
        connect_timeout=request_timeout,
        read_timeout=request_timeout,
        # Our own loop retries (testable, with a clear final error); botocore retrying as well
        # would multiply the attempts against an index that is already throttling us.
        retries={"max_attempts": 0, "mode": "standard"},
    )
    try:
        factory = session.client if session is not None else boto3.client
        return factory("kendra", region_name=region, config=config, **client_kwargs)
    except NoRegionError:
        raise ConfigError(
            "Kendra needs an AWS region and none is configured",
            "set KENDRA_REGION (or AWS_REGION) to the region of the Kendra index, e.g. us-east-1",
        ) from None


class KendraRetriever(LabRetriever):
    """Passages from an Amazon Kendra index, in Kendra's order (see the module docstring)."""

    mode = "kendra"

    def __init__(
        self,
        index_id: str,
        region: str | None = None,
        top_k: int = 10,
        attribute_filter: Mapping[str, Any] | None = None,
        client: KendraClient | None = None,
        *,
        max_retries: int = 3,
        request_timeout: float = 60.0,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
        sleep: Callable[[float], None] = time.sleep,
        **kwargs: Any,
    ) -> None:
        super().__init__(top_k=top_k, **kwargs)
        index_id = (index_id or "").strip()
        if not index_id:
            raise ConfigError(NOT_CONFIGURED_MESSAGE, _CONFIG_HINT)
        if not _INDEX_ID_RE.fullmatch(index_id):
            raise ConfigError(
                f"KENDRA_INDEX_ID {index_id!r} is not a Kendra index id",
                "use the index's 36-character id (Kendra console → Indexes → Index ID), not its name",
            )
        if max_retries < 0:
            raise ValueError(f"max_retries must be ≥ 0, got {max_retries!r}")
        self.index_id = index_id
        self.region = region
        self.attribute_filter = dict(attribute_filter) if attribute_filter else None
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self._sleep = sleep
        self.client: KendraClient = client if client is not None else make_kendra_client(
            region, request_timeout
        )

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        top_k: int = 10,
        client: KendraClient | None = None,
        **kwargs: Any,
    ) -> KendraRetriever:
        """Build from rag-lab settings (KENDRA_INDEX_ID, KENDRA_REGION/AWS_REGION, timeouts)."""
        if not settings.kendra_index_id:
            raise ConfigError(NOT_CONFIGURED_MESSAGE, _CONFIG_HINT)
        kwargs.setdefault("max_retries", settings.max_retries)
        kwargs.setdefault("request_timeout", settings.request_timeout)
        return cls(
            settings.kendra_index_id,
            region=settings.kendra_region_name,
            top_k=top_k,
            client=client,
            **kwargs,
        )

    # -- search ------------------------------------------------------------------------------

    def _search(self, query: str, top_k: int) -> list[NodeWithScore]:
        params: dict[str, Any] = {
            "IndexId": self.index_id,
            "QueryText": _cut_query(query),
            # Kendra returns at most 100 passages; asking for more is pointless.
            "PageSize": min(top_k, MAX_PAGE_SIZE),
        }
        if self.attribute_filter:
            params["AttributeFilter"] = self.attribute_filter
        response = self._call_retrieve(params)
        return result_nodes(self.index_id, response)

    def _call_retrieve(self, params: dict[str, Any]) -> Mapping[str, Any]:
        from botocore.exceptions import (
            ClientError,
            ConnectionClosedError,
            ConnectTimeoutError,
            EndpointConnectionError,
            NoCredentialsError,
            ParamValidationError,
            PartialCredentialsError,
            ReadTimeoutError,
        )

        attempts = self.max_retries + 1
        last_error: Exception | None = None
        for attempt in range(1, attempts + 1):
            try:
                return self.client.retrieve(**params)
            except ClientError as exc:
                if not _is_retryable(exc):
                    raise self._client_error(exc) from exc
                last_error = exc
            except (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError,
                    ConnectionClosedError) as exc:
                last_error = exc
            except (NoCredentialsError, PartialCredentialsError) as exc:
                raise ConfigError(
                    f"No usable AWS credentials for Amazon Kendra ({exc})", _CREDENTIALS_HINT
                ) from exc
            except ParamValidationError as exc:
                # Raised before anything is sent: our parameters (usually the filter) are wrong.
                raise ConfigError(
                    f"Invalid Amazon Kendra request for index {self.index_id}: {exc}",
                    "check the attribute_filter against Kendra's AttributeFilter structure",
                ) from exc
            if attempt < attempts:
                delay = self._backoff(attempt)
                logger.warning(
                    "Kendra index %s: attempt %d/%d failed (%s); retrying in %.1fs",
                    self.index_id, attempt, attempts, _describe(last_error), delay,
                )
                self._sleep(delay)
        raise self._exhausted(last_error, attempts)

    def _backoff(self, attempt: int) -> float:
        # Exponential, capped, with jitter so parallel workers do not retry in lock-step.
        delay = min(self.backoff_cap, self.backoff_base * 2 ** (attempt - 1))
        return delay * random.uniform(0.5, 1.0)

    # -- errors --------------------------------------------------------------------------------

    def _where(self) -> str:
        return f"index {self.index_id}" + (f" in {self.region}" if self.region else "")

    def _client_error(self, exc: Exception) -> Exception:
        code, message, _ = _error_parts(exc)
        where = self._where()
        if code == "AccessDeniedException":
            return ProviderError(
                f"Amazon Kendra denied access to {where}: {message}",
                "allow kendra:Retrieve on this index for the AWS identity in use, "
                "or use credentials that have it",
            )
        if code == "ResourceNotFoundException":
            return ProviderError(
                f"Amazon Kendra {where} was not found: {message}",
                "check KENDRA_INDEX_ID and KENDRA_REGION/AWS_REGION (an index lives in one "
                "region) and that the index is ACTIVE",
            )
        if code == "ValidationException":
            return ProviderError(
                f"Amazon Kendra rejected the request to {where}: {message}",
                "check the query (length, language), top_k (≤ 100) and the attribute filter",
            )
        if code == "ServiceQuotaExceededException":
            return ProviderError(
                f"Amazon Kendra quota exceeded for {where}: {message}",
                "raise the index's query capacity units or the account quota, or query less often",
            )
        if code in _BAD_CREDENTIAL_CODES:
            return ConfigError(f"AWS rejected the credentials used for Amazon Kendra: {message}",
                               _CREDENTIALS_HINT)
        return ProviderError(
            f"Amazon Kendra failed for {where}: {code}: {message}",
            "see the AWS error code above; check the index status in the Kendra console",
        )

    def _exhausted(self, exc: Exception | None, attempts: int) -> ProviderError:
        where = self._where()
        code = _error_parts(exc)[0]
        if code in {"ThrottlingException", "Throttling", "TooManyRequestsException"}:
            return ProviderError(
                f"Amazon Kendra kept throttling requests to {where} ({attempts} attempts)",
                "query more slowly (fewer parallel queries), add query capacity units to the "
                "index, or retry later; RAG_LAB_MAX_RETRIES sets the number of retries",
            )
        return ProviderError(
            f"Amazon Kendra {where} did not answer after {attempts} attempts: {_describe(exc)}",
            "retry later; check network access to AWS, the AWS Health Dashboard and "
            "RAG_LAB_REQUEST_TIMEOUT",
        )


# -- helpers -----------------------------------------------------------------------------------


def _error_parts(exc: Exception | None) -> tuple[str, str, int | None]:
    """(error code, message, HTTP status) of a botocore ClientError; empty for anything else."""
    response = getattr(exc, "response", None) or {}
    error = response.get("Error") or {}
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return str(error.get("Code") or ""), str(error.get("Message") or ""), status


def _is_retryable(exc: Exception) -> bool:
    code, _, status = _error_parts(exc)
    return code in _RETRYABLE_CODES or (isinstance(status, int) and status >= 500)


def _describe(exc: Exception | None) -> str:
    code, message, _ = _error_parts(exc)
    if code:
        return f"{code}: {message}" if message else code
    return f"{type(exc).__name__}: {exc}" if exc is not None else "no response"


def _cut_query(query: str) -> str:
    if len(query) <= MAX_QUERY_CHARS:
        return query
    cut = query[:MAX_QUERY_CHARS]
    return cut.rsplit(None, 1)[0] or cut  # do not send half a word


__all__ = [
    "MAX_PAGE_SIZE",
    "MAX_QUERY_CHARS",
    "NOT_CONFIGURED_MESSAGE",
    "KendraClient",
    "KendraRetriever",
    "make_kendra_client",
]
