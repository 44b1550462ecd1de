"""``bedrock`` provider: LlamaIndex's BedrockConverse over a boto3 client we configure.

Retries are botocore's "standard" mode (throttling, 5xx, timeouts; exponential backoff with
jitter capped at 20 s), bounded by ``settings.max_retries``. LlamaIndex's own tenacity layer is
cut to one attempt: its default (10 × botocore's 10) could keep a throttled run going for minutes.
Credentials come from boto3's usual chain (env, profile, role) and never pass through us.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.llms.bedrock_converse import BedrockConverse

from rag_lab.config import LLM_PROVIDERS, Settings
from rag_lab.errors import ConfigError, ProviderError
from rag_lab.models.llm._guard import ErrorGuard, GuardedLLMMixin, ProviderAccessError

_THROTTLED = {"ThrottlingException", "TooManyRequestsException", "ServiceQuotaExceededException"}
_SERVER = {"InternalServerException", "ServiceUnavailableException", "ModelTimeoutException",
           "ModelNotReadyException"}
_AUTH = {"AccessDeniedException", "UnrecognizedClientException", "ExpiredTokenException"}


class MalformedResponse(Exception):
    """A Converse response without the documented shape."""


class _CheckedClient:
    """Delegates to a ``bedrock-runtime`` client, checking what ``converse`` returns.

    A body botocore cannot parse fails inside its parser (``AttributeError`` …) and one without
    ``output.message.content`` fails later inside LlamaIndex (``KeyError``): both become
    ``MalformedResponse`` here, where nothing else can raise them.
    """

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def converse(self, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self._client.converse(**kwargs)
        except (BotoCoreError, ClientError):
            raise
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise MalformedResponse(f"unparseable response: {exc!r}") from exc
        output = response.get("output")
        message = output.get("message") if isinstance(output, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            raise MalformedResponse("no output.message.content in the response")
        return response


class RagLabBedrockConverse(GuardedLLMMixin, BedrockConverse):
    """LlamaIndex ``BedrockConverse`` whose failures surface as ``ProviderError``."""

    _guard: ErrorGuard = PrivateAttr()


def bedrock_runtime_client(settings: Settings) -> Any:
    """A ``bedrock-runtime`` client with bounded retries and our timeouts."""
    if not settings.aws_region:
        raise ConfigError("The bedrock LLM provider needs an AWS region",
                          "set AWS_REGION (and AWS credentials, e.g. AWS_PROFILE or AWS_ACCESS_KEY_ID/"
                          "AWS_SECRET_ACCESS_KEY)")
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"total_max_attempts": settings.max_retries + 1, "mode": "standard"},
        connect_timeout=min(settings.request_timeout, 10.0),
        read_timeout=settings.request_timeout,
        user_agent_extra="x-client-framework:llama_index",
    )
    return boto3.session.Session(region_name=settings.aws_region).client("bedrock-runtime", config=config)


def _classify(exc: BaseException, guard: ErrorGuard) -> ProviderError | None:
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        ConnectTimeoutError,
        NoCredentialsError,
        ReadTimeoutError,
    )
    from botocore.parsers import ResponseParserError

    tries = f"after up to {guard.attempts} attempt(s)"
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        if code in _THROTTLED:
            return guard.error(f"throttled ({code}) {tries}", "wait, lower concurrency, raise RAG_LAB_MAX_RETRIES "
                               "or request a higher Bedrock quota", exc)
        if code in _SERVER:
            return guard.error(f"server error ({code}) {tries}", "the service is failing; try again later", exc)
        if code in _AUTH:
            return guard.error(f"access denied ({code})", "check the AWS credentials and that model access "
                               "is enabled for this account and region", exc, ProviderAccessError)
        if code == "ResourceNotFoundException":
            return guard.error("model not found", "check RAG_LAB_LLM_MODEL and AWS_REGION", exc, ProviderAccessError)
        return guard.error(f"request rejected ({code or 'ClientError'})", "check the model id, region and "
                           "request parameters", exc)
    if isinstance(exc, (ReadTimeoutError, ConnectTimeoutError)):
        return guard.error(f"request timed out {tries}", "raise RAG_LAB_REQUEST_TIMEOUT or try again later", exc)
    if isinstance(exc, NoCredentialsError):
        return guard.error("no AWS credentials found", "set AWS_PROFILE or AWS_ACCESS_KEY_ID/"
                           "AWS_SECRET_ACCESS_KEY", exc, ProviderAccessError)
    if isinstance(exc, (ResponseParserError, MalformedResponse)):
        return guard.error("malformed response body", "the service returned something unexpected; try again", exc)
    if isinstance(exc, BotoCoreError):
        return guard.error("AWS client error", "check the network, region and credentials", exc)
    return None


def build_bedrock(settings: Settings, model: str, *, bedrock_client: Any = None) -> FunctionCallingLLM:
    """``bedrock_client``: an injected ``bedrock-runtime`` client (tests, custom sessions); its own
    retry/timeout config then applies instead of ours."""
    client = bedrock_client if bedrock_client is not None else bedrock_runtime_client(settings)
    try:
        llm = RagLabBedrockConverse(
            model=model,
            temperature=settings.llm_temperature,
            max_tokens=settings.llm_max_tokens,
            region_name=settings.aws_region,
            client=_CheckedClient(client),
            timeout=settings.request_timeout,
            max_retries=1,  # one tenacity attempt: botocore does the retrying
        )
        llm.metadata  # unknown model ids fail here, not at the first call
    except ValueError as exc:  # includes pydantic's ValidationError
        raise ConfigError(f"Cannot use Bedrock model {model!r}: {exc}", "check RAG_LAB_LLM_MODEL / "
                          "RAG_LAB_AGENT_MODEL (Converse model ids, e.g. amazon.nova-pro-v1:0)") from None
    region = getattr(getattr(client, "meta", None), "region_name", None) or settings.aws_region or ""
    llm._guard = ErrorGuard(LLM_PROVIDERS["bedrock"].label, model, settings.max_retries + 1, _classify, endpoint=str(region))
    return llm
