"""Optional LLM reranking (LlamaIndex ``LLMRerank``) that fails loudly, never silently.

The stock parser skips every line it cannot read, so an unparseable choice list (common with
tiny local models) becomes an *empty* rerank, i.e. no context at all. Here a batch without one
readable ``Doc: N, Relevance: R`` line raises :class:`RerankParseError`; :func:`rerank_nodes`
then keeps the retrieval order cut to ``top_n`` and records that the rerank failed and why.

The reranked list always has ``top_n`` chunks (when there are that many): the LLM's picks first,
then the remaining candidates in retrieval order, so the answer prompt has the same size with
and without reranking. Node scores stay the retriever's; the LLM's relevance goes to
``metadata["rerank_score"]``. Kendra is never reranked: it ranks internally.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms.llm import LLM
from llama_index.core.postprocessor import LLMRerank
from llama_index.core.prompts.default_prompts import DEFAULT_CHOICE_SELECT_PROMPT
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore

from rag_lab.answer.context import CHARS_PER_TOKEN, context_budget
from rag_lab.answer.types import RerankInfo

logger = logging.getLogger(__name__)

DEFAULT_TOP_N = 7
# Retrieval modes that must not be reranked, and why (shown in RerankInfo.reason).
NO_RERANK_MODES = {"kendra": "kendra ranks internally"}
RERANK_SCORE_KEY = "rerank_score"
HEADER_TOKENS = 8  # "Document N:" and blank lines

# "Doc: 3, Relevance: 7", "Document 3 - relevance 7", "doc:3": relevance optional (then 1).
_CHOICE = re.compile(r"\bdoc(?:ument)?\s*[:#]?\s*(\d+)(?:\D*?relevance\s*[:=]?\s*(\d+(?:\.\d+)?))?",
                     re.IGNORECASE)


class RerankParseError(ValueError):
    """The reranking LLM's answer holds no usable choice."""


def parse_choices(answer: str, num_choices: int) -> tuple[list[int], list[float]]:
    """(1-based doc numbers, relevances) from a choice list; raises if nothing usable."""
    numbers: list[int] = []
    relevances: list[float] = []
    for line in answer.splitlines():
        match = _CHOICE.search(line)
        if not match:
            continue
        number = int(match.group(1))
        if 1 <= number <= num_choices and number not in numbers:  # stock parser: 0 → last doc
            numbers.append(number)
            relevances.append(float(match.group(2)) if match.group(2) else 1.0)
    if not numbers:
        shown = " ".join(answer.split())[:200]
        raise RerankParseError(f"no 'Doc: N, Relevance: R' choice among {num_choices} documents in {shown!r}")
    return numbers, relevances


def format_batch(nodes: Sequence[BaseNode], max_chars: int) -> str:
    """LlamaIndex's ``Document N:`` layout, each text cut to ``max_chars`` so that a batch of
    500-word chunks still fits a small model's context window."""
    parts = []
    for number, node in enumerate(nodes, start=1):
        text = " ".join(node.get_content(metadata_mode=MetadataMode.NONE).split())
        parts.append(f"Document {number}:\n{text[:max_chars]}")
    return "\n\n".join(parts)


class LabLLMRerank(LLMRerank):
    """``LLMRerank`` with a strict parser and truncated documents, always the text prompt
    (the chat variant passes content blocks that small chat templates drop)."""

    max_chars: int = Field(default=800, description="Characters of each document shown to the LLM.")

    def __init__(self, llm: LLM, top_n: int = DEFAULT_TOP_N, choice_batch_size: int = 10,
                 max_chars: int = 800) -> None:
        super().__init__(llm=llm, top_n=top_n, choice_batch_size=choice_batch_size,
                         choice_select_prompt=DEFAULT_CHOICE_SELECT_PROMPT,
                         parse_choice_select_answer_fn=parse_choices)
        self.max_chars = max_chars

    def _get_predict_kwargs(self, nodes_batch: list[BaseNode], query_str: str) -> dict[str, Any]:
        # Shrink the per-document text further when the batch would overflow the LLM's window.
        budget = context_budget(self.llm, query_str, self.choice_select_prompt)
        per_doc = budget // max(1, len(nodes_batch)) - HEADER_TOKENS
        max_chars = max(0, min(self.max_chars, int(per_doc * CHARS_PER_TOKEN)))
        return {"query_str": query_str, "context_str": format_batch(nodes_batch, max_chars)}


def rerank_nodes(
    nodes: list[NodeWithScore],
    query: str,
    reranker: LLMRerank | None,
    top_n: int = DEFAULT_TOP_N,
    skip_reason: str = "disabled",
) -> tuple[list[NodeWithScore], RerankInfo]:
    """The ``top_n`` chunks for the prompt and what the reranker did to get them."""
    candidates = len(nodes)
    if reranker is None:
        kept = nodes[:top_n]
        return kept, RerankInfo("skipped", candidates, len(kept), 0, skip_reason)
    try:
        picks = reranker.postprocess_nodes(nodes, query_str=query)
    except Exception as exc:  # noqa: BLE001 - any rerank failure falls back, and is recorded
        reason = f"{type(exc).__name__}: {exc}"
        logger.warning("LLM rerank failed, keeping the retrieval order: %s", reason)
        kept = nodes[:top_n]
        return kept, RerankInfo("failed", candidates, len(kept), 0, reason)
    by_id = {r.node.node_id: r for r in nodes}
    picked: list[NodeWithScore] = []
    chosen: set[str] = set()
    for pick in picks:
        node_id = pick.node.node_id
        if node_id in by_id and node_id not in chosen and len(picked) < top_n:
            _set_rerank_score(by_id[node_id].node, pick.score)
            picked.append(by_id[node_id])
            chosen.add(node_id)
    fill = [r for r in nodes if r.node.node_id not in chosen][: max(0, top_n - len(picked))]
    kept = picked + fill
    return kept, RerankInfo("applied", candidates, len(kept), len(picked))


def _set_rerank_score(node: BaseNode, score: float | None) -> None:
    node.metadata[RERANK_SCORE_KEY] = score
    for excluded in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
        if RERANK_SCORE_KEY not in excluded:
            excluded.append(RERANK_SCORE_KEY)
