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


LISTWISE_PROMPT = (
    "Rank the documents below by how useful they are for answering the question.\n"
    'Reply in JSON: {{"ranking": [the numbers of the {top_n} most useful documents, most useful first]}}.\n\n'
    "Question: {query_str}\n\n{context_str}\n"
)


class ListwiseJSONRerank(LLMRerank):
    """Listwise LLM rerank through constrained output, for LLMs that support it (the local
    models): one prompt with every candidate (truncated), and a JSON-schema-constrained reply
    ``{"ranking": [N, …]}`` of distinct in-range numbers, so a small model's choice always parses.
    Picks get scores top_n, top_n-1, …; ``rerank_nodes`` fills up in retrieval order."""

    max_chars: int = Field(default=500, description="Characters of each document shown to the LLM.")
    max_candidates: int = Field(default=10, description="Candidates shown (the top of the retrieval order).")

    def __init__(self, llm: LLM, top_n: int = DEFAULT_TOP_N, max_chars: int = 500, max_candidates: int = 10) -> None:
        super().__init__(llm=llm, top_n=top_n, choice_batch_size=max_candidates,
                         parse_choice_select_answer_fn=parse_choices)
        self.max_chars = max_chars
        self.max_candidates = max_candidates

    @classmethod
    def class_name(cls) -> str:
        return "ListwiseJSONRerank"

    def schema(self, count: int) -> dict[str, Any]:
        items = {"type": "integer", "minimum": 1, "maximum": count}
        return {"type": "object", "required": ["ranking"], "additionalProperties": False,
                "properties": {"ranking": {"type": "array", "items": items, "minItems": 1,
                                           "maxItems": min(self.top_n, count)}}}

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: Any = None) -> list[NodeWithScore]:
        if query_bundle is None:
            raise ValueError("Query bundle must be provided.")
        shown = nodes[: self.max_candidates]
        if not shown:
            return []
        budget = context_budget(self.llm, query_bundle.query_str)
        per_doc = budget // len(shown) - HEADER_TOKENS
        max_chars = max(0, min(self.max_chars, int(per_doc * CHARS_PER_TOKEN)))
        prompt = LISTWISE_PROMPT.format(top_n=min(self.top_n, len(shown)), query_str=query_bundle.query_str,
                                        context_str=format_batch([n.node for n in shown], max_chars))
        reply = self.llm.complete(prompt, json_schema=self.schema(len(shown))).text
        numbers = parse_ranking(reply, len(shown))
        return [NodeWithScore(node=shown[n - 1].node, score=float(len(numbers) - i)) for i, n in enumerate(numbers)]


# What a reranked answer depends on in this module's text: both rerank prompts and what they show.
# Part of cached answers' keys (rag_lab.evaluate.plan.answering.prompt_version): a prompt change invalidates them.
RERANK_PROMPT_VERSION = "\x00".join([
    LISTWISE_PROMPT, DEFAULT_CHOICE_SELECT_PROMPT.get_template(),
    f"listwise: {ListwiseJSONRerank.model_fields['max_chars'].default} chars x "
    f"{ListwiseJSONRerank.model_fields['max_candidates'].default} candidates; "
    f"choice-select: {LabLLMRerank.model_fields['max_chars'].default} chars",
])


def parse_ranking(reply: str, count: int) -> list[int]:
    """Distinct in-range doc numbers from ``{"ranking": […]}``; raises when none is usable."""
    import json

    try:
        data = json.loads(reply)
    except ValueError:
        data = None
    ranking = data.get("ranking") if isinstance(data, dict) else None
    numbers: list[int] = []
    for value in ranking if isinstance(ranking, list) else []:
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= count and value not in numbers:
            numbers.append(value)
    if not numbers:
        raise RerankParseError(f"no ranking among {count} documents in {' '.join(reply.split())[:200]!r}")
    return numbers


def make_reranker(llm: LLM, top_n: int = DEFAULT_TOP_N) -> LLMRerank:
    """The listwise JSON rerank for LLMs with constrained output, LlamaIndex's choice-select otherwise."""
    if getattr(llm, "supports_constrained_output", False):
        return ListwiseJSONRerank(llm, top_n=top_n)
    return LabLLMRerank(llm, top_n=top_n)


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
