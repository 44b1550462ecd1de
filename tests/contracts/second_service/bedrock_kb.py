"""A second service retriever, written as a user adds one: this file plus one registry line
(``RetrieverEntry("bedrock-kb", "<this module>:BedrockKBRetriever", "AWS", service="Bedrock KB")``).

Amazon Bedrock Knowledge Bases' ``Retrieve`` API (boto3 ``bedrock-agent-runtime``): the service
indexes its documents itself and returns its own top-k passages, best first. The knowledge base is
named by ``BEDROCK_KB_ID`` (and ``AWS_REGION``). ``tests/contracts/test_second_service.py`` copies it
into the package and runs the contract suite and ``eval`` on it.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from rag_lab.errors import ConfigError
from rag_lab.retrieve.base import check_query, check_top_k, finalize_results

MAX_RESULTS = 100  # the API's numberOfResults at most


class BedrockKBRetriever(BaseRetriever):
    mode_name = "bedrock-kb"

    def __init__(self, client: Any, knowledge_base_id: str, top_k: int = 5) -> None:
        self.client, self.knowledge_base_id = client, knowledge_base_id
        self.top_k = min(check_top_k(top_k), MAX_RESULTS)
        super().__init__()

    @classmethod
    def from_settings(cls, settings, top_k: int = 5, client: Any = None) -> BedrockKBRetriever:
        knowledge_base = os.environ.get("BEDROCK_KB_ID")
        if not knowledge_base:
            raise ConfigError("Bedrock knowledge base not configured", "set BEDROCK_KB_ID (and AWS_REGION)")
        if client is None:
            import boto3

            client = boto3.client("bedrock-agent-runtime", region_name=os.environ.get("AWS_REGION", "us-east-1"))
        return cls(client, knowledge_base, top_k)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = check_query(query_bundle.query_str)
        reply = self.client.retrieve(knowledgeBaseId=self.knowledge_base_id, retrievalQuery={"text": query},
                                     retrievalConfiguration={"vectorSearchConfiguration": {"numberOfResults": self.top_k}})
        results = []
        for item in reply.get("retrievalResults", [])[: self.top_k]:
            uri = item["location"]["s3Location"]["uri"]
            text = item["content"]["text"]
            page = (item.get("metadata") or {}).get("x-amz-bedrock-kb-document-page-number")
            chunk = hashlib.sha256(f"{uri}\x00{text}".encode()).hexdigest()[:16]
            name = uri.rsplit("/", 1)[-1]
            node = TextNode(id_=f"{name}#{chunk}", text=text, metadata={
                "doc_id": name, "chunk_id": chunk, "filename": name, "page": int(page) if page is not None else None})
            results.append(NodeWithScore(node=node, score=float(item.get("score", 0.0))))
        results.sort(key=lambda r: -r.score)  # the service's order is best first; kept stable on ties
        return finalize_results(results)
