"""Tool calling for local chat models, written once, independent of the model's chat template.

Pure functions (no model), the local provider's glue:

- messages: tool calls are written into the assistant turn as the JSON the model is asked to
  produce, and tool results come back as a user turn ``Function result: …``, so any ChatML
  template (SmolLM2's has no tool branch) renders the whole exchange;
- tools are described in the system message;
- the model's reply is constrained by a JSON schema (``response_format``): a forced call is
  the tool's own parameter schema, so arguments are always well-formed JSON of the right shape;
  "auto" is ``{"name", "arguments"}`` for each tool or ``{"answer": text}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole, TextBlock, ToolCallBlock

# Every tool prompt lists the tools inside a system message: make sure there is one.
TOOL_SYSTEM_PROMPT = "You are a helpful assistant. Call a function when it helps answer the user."
RESULT_PREFIX = "Function result:\n"


def _tool_arguments(kwargs: dict[str, Any] | str) -> dict[str, Any] | str:
    return parse_arguments(kwargs) if isinstance(kwargs, str) else kwargs


def render_call(name: str, arguments: dict[str, Any] | str) -> str:
    """How a tool call appears in the conversation (and what the model writes in "auto" mode)."""
    return json.dumps({"name": name, "arguments": _tool_arguments(arguments)}, ensure_ascii=False)


def to_llama_messages(messages: Sequence[ChatMessage], *, with_tools: bool) -> list[dict[str, Any]]:
    """LlamaIndex messages → OpenAI-style dicts that every ChatML template renders in full."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role, text = message.role, message.content or ""
        if role == MessageRole.ASSISTANT:
            calls = [b for b in message.blocks if isinstance(b, ToolCallBlock)]
            rendered = "\n".join(render_call(c.tool_name, c.tool_kwargs) for c in calls)
            out.append({"role": "assistant", "content": "\n".join(t for t in (text.strip(), rendered) if t)})
        elif role == MessageRole.TOOL:
            out.append({"role": "user", "content": f"{RESULT_PREFIX}{text}"})
        elif role in (MessageRole.SYSTEM, MessageRole.DEVELOPER):
            out.append({"role": "system", "content": text})
        else:
            out.append({"role": "user", "content": text})
    if with_tools and not (out and out[0]["role"] == "system"):
        out.insert(0, {"role": "system", "content": TOOL_SYSTEM_PROMPT})
    return out


def describe_tools(specs: list[dict[str, Any]], choice: str | dict[str, Any]) -> str:
    """The system-message text that lists the tools and says how to call them."""
    lines = ["", "You can call these functions:"]
    for spec in specs:
        fn = spec["function"]
        params = fn.get("parameters", {}).get("properties", {})
        args = ", ".join(f"{k}: {v.get('type', 'any')}" for k, v in params.items())
        lines.append(f"- {fn['name']}({args}): {fn.get('description', '').strip()}")
    forced = forced_name(specs, choice)
    if forced:
        lines.append(f"Call {forced} now: reply with its arguments as one JSON object.")
    else:
        lines.append('To call a function reply with JSON {"name": <function>, "arguments": {…}}; '
                     'to answer without a function reply with JSON {"answer": <your answer>}.')
    return "\n".join(lines)


def forced_name(specs: list[dict[str, Any]], choice: str | dict[str, Any]) -> str | None:
    if isinstance(choice, dict):
        return choice.get("function", {}).get("name")
    return None


def _params_schema(spec: dict[str, Any]) -> dict[str, Any]:
    schema = dict(spec["function"].get("parameters") or {"type": "object", "properties": {}})
    schema.setdefault("type", "object")
    schema.setdefault("additionalProperties", False)  # no invented keyword arguments
    return schema


def tool_schema(specs: list[dict[str, Any]], choice: str | dict[str, Any]) -> dict[str, Any]:
    """The JSON schema the reply must follow for ``choice`` (a named tool, or "auto")."""
    name = forced_name(specs, choice)
    if name:
        spec = next((s for s in specs if s["function"]["name"] == name), None)
        if spec is None:
            raise ValueError(f"tool_choice names {name!r}, which is not among the tools")
        return _params_schema(spec)
    # additionalProperties: without it the grammar lets a small model add invented keys until max_tokens
    calls = [{"type": "object", "properties": {"name": {"const": s["function"]["name"]},
                                                "arguments": _params_schema(s)},
              "required": ["name", "arguments"], "additionalProperties": False} for s in specs]
    answer = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
              "additionalProperties": False}
    return {"anyOf": [*calls, answer]}


# llguidance (llama.cpp's grammar engine in xllamacpp) writes JSON without the newlines and
# indentation a schema-derived grammar allows: fewer tokens per answer (~15 % on short replies).
_COMPACT = {"whitespace_flexible": False, "key_separator": ": ", "item_separator": ", "}


def json_grammar(schema: dict[str, Any]) -> str:
    """A llama.cpp ``grammar`` (llguidance syntax) for one compact JSON value of ``schema``."""
    return "%llguidance {}\nstart: %json " + json.dumps({**schema, "x-guidance": _COMPACT})


# llguidance (xllamacpp 2026.10) lets a string held to an enum or const end anywhere after an escaped
# quote: under ``{"enum": ['a "b" c']}`` the 1.5B wrote "a \"b" (a judge quoting a passage with
# quotes in it failed twice, then was recorded as a failure). Such literals are asked with this
# stand-in for '"' and the reply's stand-ins written back as \" (tests/models/test_llm_local.py).
QUOTE_STAND_IN = "\u2033"  # ″ (double prime): one character, never in RAG text we saw


def quotes_stood_in(schema: Any) -> tuple[Any, bool]:
    """``schema`` with '"' replaced by ``QUOTE_STAND_IN`` in every enum and const string, and whether
    any was (then the reply goes through ``quotes_restored``)."""
    changed = False

    def stand_in(value: Any) -> Any:
        nonlocal changed
        if isinstance(value, list):
            return [stand_in(item) for item in value]
        if isinstance(value, str) and '"' in value:
            changed = True
            return value.replace('"', QUOTE_STAND_IN)
        return value

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, dict):
            return {key: stand_in(value) if key in ("enum", "const") else walk(value) for key, value in node.items()}
        return node

    return walk(schema), changed


def quotes_restored(text: str) -> str:
    """A JSON reply written under ``quotes_stood_in``, with each stand-in an escaped quote again."""
    return text.replace(QUOTE_STAND_IN, '\\"')


def schema_of(response_format: Any) -> dict[str, Any] | None:
    """The JSON schema inside an OpenAI-style ``response_format`` (None for text or json_object)."""
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        inner = response_format.get("json_schema") or {}
        return inner.get("schema") if isinstance(inner, dict) else None
    return None


_DANGLING_KEY = re.compile(r',\s*("(?:[^"\\]|\\.)*"\s*:?\s*)?$')
_DANGLING_COMMA = re.compile(r',\s*$')


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
    text += '"' if in_string else ""
    # Cut between two members: drop the dangling comma, or in an object the dangling key too
    # (`{"a": "x", "b": ` → `{"a": "x"`; in an array `["a", "b"` stays).
    in_object = bool(closers) and closers[-1] == "}"
    text = (_DANGLING_KEY if in_object else _DANGLING_COMMA).sub("", text.rstrip())
    return text + "".join(reversed(closers))


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


def interpret_reply(content: str, specs: list[dict[str, Any]], choice: str | dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """(text, tool calls) from a constrained reply: the forced tool's arguments, an auto-mode
    ``{"name", "arguments"}`` call or ``{"answer"}`` text. Unreadable JSON is kept as text."""
    forced = forced_name(specs, choice)
    data = parse_arguments(content)
    if forced:
        return "", [{"name": forced, "arguments": data}]
    names = {s["function"]["name"] for s in specs}
    if data.get("name") in names:
        arguments = data.get("arguments")
        return "", [{"name": data["name"], "arguments": arguments if isinstance(arguments, dict) else {}}]
    if isinstance(data.get("answer"), str):
        return data["answer"], []
    return content, []


def to_chat_response(raw: dict[str, Any], text: str | None = None,
                     calls: list[dict[str, Any]] | None = None) -> ChatResponse:
    """A ChatResponse from a chat-completion dict (``text``/``calls`` override its message)."""
    message = raw["choices"][0]["message"]
    content = message.get("content") or "" if text is None else text
    blocks: list[Any] = [TextBlock(text=content)]
    for number, call in enumerate(calls or [], start=1):
        blocks.append(ToolCallBlock(tool_call_id=f"call_{raw.get('id', 'local')}_{number}", tool_name=call["name"],
                                    tool_kwargs=call["arguments"]))
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks), raw=raw)


def resolve_tool_choice(specs: list[dict[str, Any]], tool_choice: str | dict[str, Any] | None,
                        tool_required: bool) -> str | dict[str, Any]:
    """"auto", "none" or one named function ({"type": "function", "function": {"name": …}});
    "required" with one tool names it, with several it is "auto" (a call or an answer)."""
    if isinstance(tool_choice, dict):
        return tool_choice
    if tool_choice in ("auto", "none"):
        return tool_choice
    if tool_choice not in (None, "required", "any"):
        return {"type": "function", "function": {"name": tool_choice}}
    if (tool_required or tool_choice is not None) and len(specs) == 1:
        return {"type": "function", "function": {"name": specs[0]["function"]["name"]}}
    return "auto"
