"""Fit the numbered chunks into the LLM's context window.

A small local model's window is a few thousand tokens, and 500-word chunks of numeric tables take
~1,500 of its tokens, so 7 chunks need not fit. Chunks go in whole, in rank order, until the budget is
spent; the next one is cut to what is left and the rest are dropped (the top-ranked chunks are
the ones worth keeping intact). Callers must treat only the returned count of nodes as "in the
prompt", so that ``[Doc N]`` numbers and reported chunks stay aligned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from llama_index.core.constants import DEFAULT_NUM_OUTPUTS
from llama_index.core.llms.llm import LLM
from llama_index.core.prompts import BasePromptTemplate
from llama_index.core.schema import NodeWithScore
from llama_index.core.utils import get_tokenizer

from rag_lab.answer.prompt import ANSWER_PROMPT, format_chunk

# Token counts come from LlamaIndex's global tokenizer (tiktoken); a small local model's tokenizer
# (measured on SmolLM2) needs up to ~1.5x as many tokens on the corpus's number tables, so estimates are scaled up.
TOKEN_SAFETY = 1.6
# Characters per *estimated* token (~4 characters per tiktoken token / TOKEN_SAFETY).
CHARS_PER_TOKEN = 2.5
MARGIN_TOKENS = 64  # chat-template tokens and rounding
MIN_PARTIAL_TOKENS = 80  # a cut chunk shorter than this is not worth including


def estimate_tokens(text: str) -> int:
    return math.ceil(len(get_tokenizer()(text)) * TOKEN_SAFETY)


def context_budget(llm: LLM, query: str, prompt: BasePromptTemplate = ANSWER_PROMPT) -> int:
    """Tokens left for the chunks once the prompt, the question and the answer are counted."""
    meta = llm.metadata
    num_output = meta.num_output if meta.num_output and meta.num_output > 0 else DEFAULT_NUM_OUTPUTS
    frame = estimate_tokens(prompt.format(context_str="", query_str=query))
    return meta.context_window - num_output - frame - MARGIN_TOKENS


def build_context(nodes: Sequence[NodeWithScore], llm: LLM | None = None, query: str = "",
                  prompt: BasePromptTemplate = ANSWER_PROMPT) -> tuple[str, int]:
    """(context block, number of leading ``nodes`` in it). Without an LLM nothing is cut."""
    blocks = [format_chunk(i, r) for i, r in enumerate(nodes, start=1)]
    if llm is None:
        return "\n\n".join(blocks), len(blocks)
    budget = context_budget(llm, query, prompt)
    used, kept = 0, []
    for block in blocks:
        cost = estimate_tokens(block) + 1  # +1: the blank line between blocks
        if used + cost <= budget:
            kept.append(block)
            used += cost
            continue
        left = budget - used
        if left >= MIN_PARTIAL_TOKENS or not kept:  # always at least part of the top chunk
            keep = max(block.find("\n") + 1, int(len(block) * left / cost))  # the header stays
            kept.append(block[:keep].rstrip() + " …")
        break
    return "\n\n".join(kept), len(kept)
