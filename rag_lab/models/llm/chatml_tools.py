"""LlamaIndex messages and tools ↔ llama-cpp-python's ``chatml-function-calling`` format.

Pure functions (no model): the local provider's glue, unit-testable on its own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole, TextBlock, ToolCallBlock

# chatml-function-calling only lists the tools inside a system message: make sure there is one.
TOOL_SYSTEM_PROMPT = "You are a helpful assistant. Call a function when it helps answer the user."


def _tool_arguments(kwargs: dict[str, Any] | str) -> str:
    return kwargs if isinstance(kwargs, str) else json.dumps(kwargs)


def to_llama_messages(messages: Sequence[ChatMessage], *, with_tools: bool) -> list[dict[str, Any]]:
    """LlamaIndex messages → what the chatml-function-calling template renders correctly."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role, text = message.role, message.content or ""
        if role == MessageRole.ASSISTANT:
            item: dict[str, Any] = {"role": "assistant", "content": text}
            calls = [b for b in message.blocks if isinstance(b, ToolCallBlock)]
            if calls:
                item["tool_calls"] = [
                    {"id": c.tool_call_id or f"call_{i}", "type": "function",
                     "function": {"name": c.tool_name, "arguments": _tool_arguments(c.tool_kwargs)}}
                    for i, c in enumerate(calls)
                ]
            out.append(item)
        elif role == MessageRole.TOOL:
            # The template has no branch for role "tool" (it would render an empty turn).
            out.append({"role": "user", "content": f"Function result:\n{text}"})
        elif role in (MessageRole.SYSTEM, MessageRole.DEVELOPER):
            out.append({"role": "system", "content": text})
        else:
            out.append({"role": "user", "content": text})
    if with_tools and not (out and out[0]["role"] == "system"):
        out.insert(0, {"role": "system", "content": TOOL_SYSTEM_PROMPT})
    return out


def _close_json(text: str) -> str:
    """Close the strings, objects and arrays a cut-off JSON text left open."""
    closers: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            closers.append("}" if ch == "{" else "]")
        elif ch in "}]" and closers:
            closers.pop()
    return text + ('"' if in_string else "") + "".join(reversed(closers))


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict; JSON cut off by the token budget keeps what was written."""
    if isinstance(arguments, dict):
        return arguments
    if not isinstance(arguments, str) or not arguments.strip():
        return {}
    for text in (arguments, _close_json(arguments)):
        try:
            parsed = json.loads(text)
        except ValueError:
            continue
        return parsed if isinstance(parsed, dict) else {}
    return {}


def to_chat_response(raw: dict[str, Any]) -> ChatResponse:
    message = raw["choices"][0]["message"]
    blocks: list[Any] = [TextBlock(text=message.get("content") or "")]
    for call in message.get("tool_calls") or []:
        blocks.append(ToolCallBlock(tool_call_id=call.get("id"), tool_name=call["function"]["name"],
                                    tool_kwargs=parse_arguments(call["function"].get("arguments"))))
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks), raw=raw)


def add_usage(raw: dict[str, Any], earlier: dict[str, Any]) -> dict[str, Any]:
    usage, before = raw.get("usage") or {}, earlier.get("usage") or {}
    raw["usage"] = {k: usage.get(k, 0) + before.get(k, 0)
                    for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    return raw


def resolve_tool_choice(specs: list[dict[str, Any]], tool_choice: str | dict[str, Any] | None,
                         tool_required: bool) -> str | dict[str, Any]:
    """chatml-function-calling knows "auto", "none" and one named function (no "required")."""
    if isinstance(tool_choice, dict):
        return tool_choice
    if tool_choice in ("auto", "none"):
        return tool_choice
    if tool_choice not in (None, "required", "any"):
        return {"type": "function", "function": {"name": tool_choice}}
    if (tool_required or tool_choice is not None) and len(specs) == 1:
        return {"type": "function", "function": {"name": specs[0]["function"]["name"]}}
    return "auto"
