"""Agent mode: the tool loop driven by a scripted function-calling LLM (deterministic), once with
the real local SmolLM2, through the adapter, and the `rag-lab chat` loop on a scripted stdin."""

from __future__ import annotations

import asyncio
import io
import time
from typing import Any

import pytest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.bridge.pydantic import Field
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from rag_lab.answer import Source, make_answerer
from rag_lab.answer.agent import TOOL_NAME, RagAgent
from tests.answer.conftest import INCOME_FILE, INCOME_QUESTION

# LlamaIndex's workflow introspection trips pydantic's deprecation warnings (hundreds per run).
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
INCOME_URL = f"https://www.twc.texas.gov/sites/default/files/ccel/docs/{INCOME_FILE}"
FINAL = "ANSWER: The maximum is $4,106 [Doc 1].\nSOURCES: [Doc 1]"


class ToolScriptLLM(FunctionCallingLLM):
    """Replies from ``script`` in order (then repeats the last item): a dict is a tool call with
    those arguments, a str is a text reply. Records each call's messages and offered tools."""

    script: list[Any] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=100_000, num_output=256, is_chat_model=True,
                           is_function_calling_model=True, model_name="tool-script")

    def _reply(self, messages: Any, **kwargs: Any) -> ChatResponse:
        index = len(self.calls)
        self.calls.append({"messages": list(messages), "tools": kwargs.get("tools"),
                           "tool_choice": kwargs.get("tool_choice")})
        item = self.script[min(index, len(self.script) - 1)]
        blocks: list[Any] = [TextBlock(text=item if isinstance(item, str) else "")]
        if isinstance(item, dict):
            blocks.append(ToolCallBlock(tool_call_id=f"call_{index}", tool_name=TOOL_NAME, tool_kwargs=item))
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks), raw={"usage": usage})

    @llm_chat_callback()
    def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        return self._reply(messages, **kwargs)

    @llm_chat_callback()
    async def achat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        return self._reply(messages, **kwargs)

    def stream_chat(self, messages: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def astream_chat(self, messages: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    def _prepare_chat_with_tools(self, tools: Any, user_msg: Any = None, chat_history: Any = None,
                                 verbose: bool = False, allow_parallel_tool_calls: bool = False,
                                 tool_required: bool = False, tool_choice: Any = None, **kwargs: Any) -> dict:
        messages = list(chat_history or []) + ([user_msg] if user_msg is not None else [])
        return {"messages": messages, "tools": [t.metadata.name for t in tools], "tool_choice": tool_choice, **kwargs}

    def get_tool_calls_from_response(self, response: ChatResponse, error_on_no_tool_call: bool = True,
                                     **kwargs: Any) -> list[ToolSelection]:
        return [ToolSelection(tool_id=b.tool_call_id, tool_name=b.tool_name, tool_kwargs=b.tool_kwargs)
                for b in response.message.blocks if isinstance(b, ToolCallBlock)]

    def tool_results(self) -> list[str]:
        """Tool-result messages the LLM saw on its last call."""
        return [m.content for m in self.calls[-1]["messages"] if m.role == MessageRole.TOOL]


class StubRetriever(BaseRetriever):
    """Fixed results, every query recorded: for tests that do not need the real index."""

    def __init__(self, nodes: list[NodeWithScore]) -> None:
        self.nodes = nodes
        self.queries: list[str] = []
        super().__init__()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.queries.append(query_bundle.query_str)
        return list(self.nodes)


def stub_node(filename: str, page: int, text: str) -> NodeWithScore:
    meta = {"doc_id": filename, "chunk_id": f"{filename}#{page}", "filename": filename, "page": page}
    return NodeWithScore(node=TextNode(text=text, metadata=meta, id_=f"{filename}#{page}"), score=0.5)


STUB_NODES = [stub_node("a.pdf", 1, "Alpha says 42."), stub_node("b.pdf", 3, "Beta says 7.")]


@pytest.fixture
def stub_agent(lab_settings):
    """``stub_agent(script, **kw)``: an agent over two fixed chunks, LLM scripted."""
    def make(script: list[Any], **kwargs: Any) -> tuple[RagAgent, ToolScriptLLM, StubRetriever]:
        llm, retriever = ToolScriptLLM(script=script), StubRetriever(STUB_NODES)
        return RagAgent(lab_settings, llm=llm, retriever=retriever, **kwargs), llm, retriever
    return make


def test_junk_tool_query_falls_back_to_the_question_and_sources_are_cited(lab_settings, texas_index) -> None:
    llm = ToolScriptLLM(script=[{"query": "search_docs"}, FINAL])
    agent = RagAgent(lab_settings, "texas_childcare", llm, top_k=3, prefetch=20)
    answer = agent.chat(INCOME_QUESTION)

    [call] = agent.last_turn.calls
    assert (call.query, call.fallback, call.arguments) == (INCOME_QUESTION, True, {"query": "search_docs"})
    assert llm.calls[0]["tools"] == [TOOL_NAME]
    [result] = llm.tool_results()
    assert result == call.result and f"[Doc 1: {INCOME_FILE}, Page 1]\n" in result
    assert "[Doc 3: " in result and "[Doc 4" not in result
    assert answer.answer == "The maximum is $4,106 [Doc 1]."
    assert answer.sources == [Source(INCOME_FILE, 1, INCOME_URL)]
    assert (answer.mode, answer.response_type, answer.question) == ("agent", "agent", INCOME_QUESTION)
    assert [c.rank for c in answer.chunks] == [1, 2, 3] and answer.chunks[0].filename == INCOME_FILE
    assert answer.usage["calls"] == 2 and answer.usage["total_tokens"] == 30
    assert answer.response_time > 0
    assert answer.tool_calls == [{"arguments": {"query": "search_docs"}, "query": INCOME_QUESTION,
                                  "fallback": True, "top_k": 3, "docs": [1, 2, 3]}]
    assert answer.to_dict()["tool_calls"] == answer.tool_calls


def test_tool_calls_are_capped_and_the_turn_still_ends_with_an_answer(stub_agent) -> None:
    agent, llm, retriever = stub_agent([{"query": "alpha facts", "top_k": "99"}], max_tool_calls=2)
    start = time.perf_counter()
    answer = agent.chat("What does alpha say?")
    assert time.perf_counter() - start < 30

    calls = agent.last_turn.calls
    assert len(calls) == 3 and retriever.queries == ["alpha facts", "alpha facts"]
    assert calls[0].top_k == 20 and calls[0].numbers == [1, 2]
    assert calls[1].numbers == [1, 2] and "[Doc 1: a.pdf, Page 1] (already retrieved above)" in calls[1].result
    assert calls[2].query is None and "Search limit reached (2 per question)" in calls[2].result
    assert [c["tools"] for c in llm.calls] == [[TOOL_NAME]] * 3 + [None]  # last: asked without tools
    assert answer.answer == "I couldn't find information about that"  # the model never wrote text
    assert [s.doc for s in answer.sources] == ["a.pdf", "b.pdf"]
    # The history holds no dangling tool call: just the question and the reply.
    assert [m.role for m in agent.history] == [MessageRole.SYSTEM, MessageRole.USER, MessageRole.ASSISTANT]


def test_grounding_guarantee_searches_the_question_when_the_model_does_not(stub_agent) -> None:
    agent, llm, retriever = stub_agent(["Paris, I think.", "ANSWER: Beta says 7 [Doc 2].\nSOURCES: [Doc 2]"],
                                       force_retrieval=False)
    answer = agent.chat("What does beta say?")
    assert retriever.queries == ["What does beta say?"]
    assert llm.calls[0]["tool_choice"] is None and len(llm.calls) == 2
    second = llm.calls[1]["messages"]
    assert [m.role for m in second[-3:]] == [MessageRole.USER, MessageRole.ASSISTANT, MessageRole.TOOL]
    assert "[Doc 2: b.pdf, Page 3]" in second[-1].content
    assert answer.answer == "Beta says 7 [Doc 2]." and answer.sources == [Source("b.pdf", 3)]
    assert "Paris" not in str([m.content for m in agent.history])


def test_forced_first_search_and_answers_that_ignore_the_format(stub_agent) -> None:
    agent, llm, _ = stub_agent([{"query": "<query>"}, "Alpha says 42, see a.pdf."], force_retrieval=True)
    answer = agent.chat("alpha?")
    assert llm.calls[0]["tool_choice"] == TOOL_NAME and llm.calls[1]["tool_choice"] is None
    assert agent.last_turn.calls[0].fallback and agent.last_turn.calls[0].query == "alpha?"
    assert answer.answer == "Alpha says 42, see a.pdf."  # no ANSWER: marker: the whole reply
    assert answer.cited_sources == [] and not answer.cites  # nothing cited, and it says so
    assert [s.doc for s in answer.retrieved_sources] == ["a.pdf", "b.pdf"]
    assert [s.doc for s in answer.sources] == ["a.pdf", "b.pdf"]  # `sources` falls back to the retrieved


def test_history_window_keeps_the_system_message_and_reset_clears(stub_agent) -> None:
    agent, llm, _ = stub_agent([FINAL], max_history=4, ground=False)
    for n in range(3):
        agent.chat(f"question {n}")
    assert len(agent.history) == 5 and agent.history[0].role == MessageRole.SYSTEM
    assert [m.content for m in agent.history[1::2]] == ["question 1", "question 2"]
    sent = [m.content for m in llm.calls[-1]["messages"]]
    assert sent[0].startswith("You answer questions about a collection of documents.")
    assert sent[1:] == ["question 0", FINAL, "question 1", FINAL, "question 2"]
    agent.reset()
    assert [m.role for m in agent.history] == [MessageRole.SYSTEM] and agent.last_turn is None
    agent.chat("fresh")
    assert [m.content for m in llm.calls[-1]["messages"]][1:] == ["fresh"]


def test_sync_chat_works_inside_a_running_event_loop(stub_agent) -> None:
    agent, _, _ = stub_agent([{"query": "alpha"}, FINAL])

    async def notebook_cell() -> tuple[str, str]:
        first = agent.chat("alpha?")  # as in Jupyter: a loop is already running
        second = await agent.achat("again?")
        return first.answer, second.answer

    assert asyncio.run(notebook_cell()) == ("The maximum is $4,106 [Doc 1].",) * 2


def test_make_answerer_agent_mode_through_the_adapter(lab_settings, texas_index) -> None:
    llm = ToolScriptLLM(script=[{"query": "bi-weekly income limit family of 5"}, FINAL])
    answerer = make_answerer("agent", lab_settings, "texas_childcare", llm=llm, top_k=2, top_n=7, prefetch=20)
    answer = answerer.query(INCOME_QUESTION)
    assert answer.mode == "agent" and answer.usage["calls"] == 2 and answer.response_time > 0
    assert answer.sources[0].doc == INCOME_FILE and len(answer.chunks) == 2


def test_chat_cli_on_a_scripted_stdin(lab_settings, texas_index, monkeypatch, capsys) -> None:
    from rag_lab.cli.chat import run_chat
    from rag_lab.cli.main import build_parser

    llm = ToolScriptLLM(script=[{"query": "income limits"}, FINAL])
    args = build_parser().parse_args(["chat", "texas_childcare", "--mode", "agent", "--top-k", "2"])
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{INCOME_QUESTION}\n\nreset\n   \nquit\nnever asked\n"))
    assert run_chat(args, settings=lab_settings, llm=llm) == 0
    out = capsys.readouterr().out
    assert "The maximum is $4,106 [Doc 1]." in out and f"  - {INCOME_FILE}, page 1" in out
    assert "mode agent" in out and "(history cleared)" in out and "never asked" not in out
    # piped questions are echoed, so the transcript shows what was asked
    assert f"\n> {INCOME_QUESTION}\n" in out and out.index(f"> {INCOME_QUESTION}") < out.index("The maximum is")
    assert "\n> reset\n" in out

    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # EOF at once: a clean end
    assert run_chat(args, settings=lab_settings, llm=llm) == 0


def test_real_local_model_runs_the_loop(lab_settings, texas_index, real_llm) -> None:
    """SmolLM2-135M: answers are poor, but call → result → answer → sources must hold."""
    agent = RagAgent(lab_settings, "texas_childcare", real_llm, top_k=3, prefetch=20, max_tool_calls=1,
                     timeout=600)
    start = time.perf_counter()
    answer = agent.chat(INCOME_QUESTION)
    assert time.perf_counter() - start < 600
    assert answer.answer.strip() and answer.mode == "agent"
    assert agent.last_turn.retrieved and answer.usage["calls"] >= 2
    # The forced call is schema-constrained: its arguments always parse into a query string
    # (what a 135M model searches for, and so which file it finds, is up to the model).
    first = agent.last_turn.calls[0]
    assert isinstance(first.arguments.get("query"), str) and first.query
    assert answer.retrieved_sources and all(s.page is not None for s in answer.retrieved_sources)


def _openai_body(message: dict[str, Any], prompt_tokens: int = 50) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1_730_000_000, "model": "gpt-5-nano",
            "choices": [{"index": 0, "message": {"role": "assistant", "refusal": None, **message},
                         "logprobs": None, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 7, "total_tokens": prompt_tokens + 7}}


def test_openai_gpt5_nano_drives_the_loop_over_http(stub_agent, monkeypatch) -> None:
    """The default agent LLM (gpt-5-nano via get_llm(for_agent=True)) at the HTTP layer."""
    import json

    import httpx

    from rag_lab.config import Settings
    from rag_lab.models.llm import get_llm

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RAG_LAB_AGENT_MODEL", "RAG_LAB_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    call = {"id": "call_abc", "type": "function",
            "function": {"name": TOOL_NAME, "arguments": json.dumps({"query": "beta", "top_k": 1})}}
    replies = iter([_openai_body({"content": None, "tool_calls": [call]}),
                    _openai_body({"content": "ANSWER: Beta says 7 [Doc 1].\nSOURCES: [Doc 1]"})])
    bodies: list[dict[str, Any]] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=next(replies))

    settings = Settings(_env_file=None, llm_provider="openai", openai_api_key="sk-test")  # type: ignore[call-arg]
    llm = get_llm(settings, for_agent=True, async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    retriever = StubRetriever(STUB_NODES[::-1])
    answer = RagAgent(settings, llm=llm, retriever=retriever).chat("What does beta say?")

    first, second = bodies
    # LlamaIndex treats gpt-5 as a reasoning model: no parallel_tool_calls flag (extra calls are
    # dropped client-side), the system prompt goes as a "developer" message.
    assert first["model"] == "gpt-5-nano" and first["reasoning_effort"] == "minimal"
    assert first.get("parallel_tool_calls") in (None, False)
    assert [t["function"]["name"] for t in first["tools"]] == [TOOL_NAME] and first["tool_choice"] == "auto"
    assert first["messages"][0]["role"] in ("system", "developer")
    assert first["messages"][-1]["content"] == "What does beta say?"
    assert second["messages"][-2]["tool_calls"][0]["id"] == "call_abc"
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_abc"
    assert tool_message["content"].startswith('Results for query "beta"')
    assert "[Doc 1: b.pdf, Page 3]" in tool_message["content"]
    assert "[Doc 2" not in tool_message["content"]  # top_k 1
    assert answer.answer == "Beta says 7 [Doc 1]." and answer.sources == [Source("b.pdf", 3)]
    assert answer.usage["calls"] == 2 and answer.usage["prompt_tokens"] == 100


def test_a_failing_retriever_fails_the_turn_instead_of_answering(lab_settings) -> None:
    from rag_lab.errors import ProviderError

    class Broken(StubRetriever):
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            raise ProviderError("Kendra throttled", "wait")

    llm = ToolScriptLLM(script=[{"query": "alpha"}, FINAL])
    agent = RagAgent(lab_settings, llm=llm, retriever=Broken([]))
    with pytest.raises(ProviderError, match="Kendra throttled"):
        agent.chat("alpha?")
    assert "Kendra throttled" in llm.tool_results()[0]  # the model saw it as a tool error first
    assert len(agent.history) == 1  # a failed turn is not remembered
