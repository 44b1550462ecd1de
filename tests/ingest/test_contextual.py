"""Contextual retrieval: path annotations, LLM chunk contexts (validation, retry, cache, plan),
the remote path through the real OpenAI SDK at the HTTP layer, and the real local model once."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from llama_index.core import Document
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.schema import MetadataMode

from rag_lab.config import Settings
from rag_lab.errors import DatasetError
from rag_lab.ingest import chunk_documents
from rag_lab.ingest.contextual import (
    CONTEXT_KEY, ChunkContextualizer, ConfirmationRequired, ContextCache, ContextRequest, PathAnnotations,
    apply_contexts, clean_answer, contextualize, cut_document, document_texts, index_text, rejection_reason,
)
from rag_lab.ingest.contextual import plan as plan_module
from rag_lab.ingest.contextual.plan import ContextPlan, plan_contexts

REPO = Path(__file__).resolve().parents[2]
GOOD = "From the BCY 2026 income chart of the Texas Workforce Commission: limits for a family of five."
CHUNK = ("Family size 5: the annual income limit is $106,768, the monthly limit $8,897 and the bi-weekly "
         "limit $4,106. Families above the limit are not eligible for Child Care Services.")
DOCUMENT = "Income Eligibility Limits and Maximum Parent Share of Cost, Board Contract Year 2026.\n\n" + CHUNK


class ScriptedLLM(CustomLLM):
    """A deterministic fake that plays scripted answers and records every prompt it got."""

    answers: list[str] = []
    prompts: list[str] = []
    window: int = 4096

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=self.window, num_output=160, model_name="scripted")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        if not self.answers:
            raise AssertionError("the LLM was called more often than scripted")
        text = self.answers.pop(0)
        return CompletionResponse(text=text, raw={"usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 9}})

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        raise NotImplementedError


def scripted(*answers: str, window: int = 4096) -> ScriptedLLM:
    return ScriptedLLM(answers=list(answers), prompts=[], window=window)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- path annotations ---------------------------------------------------------------------------
def test_annotations_match_globs_in_file_order(tmp_path):
    ann = PathAnnotations.load(write(tmp_path / "annotations.yaml", """
annotations:
  - pattern: "bcy*"
    context: "A Board Contract Year chart."
  - pattern: "*"
    context: "Published by the Texas Workforce Commission."
  - pattern: "reports/*-88-leg.pdf"
    context: "Report to the 88th Legislature."
"""))
    assert ann.context_for("bcy-26-psoc-chart-twc.pdf") == (
        "A Board Contract Year chart. Published by the Texas Workforce Commission.")
    assert ann.context_for("reports/eval-88-leg.pdf") == (
        "Published by the Texas Workforce Commission. Report to the 88th Legislature.")
    assert [r.line for r in ann.matches("bcy.pdf")] == [3, 5]
    strict = PathAnnotations.load(write(tmp_path / "b.yaml", 'annotations:\n  - {pattern: "a*.pdf", context: "x y"}\n'))
    assert strict.context_for("b.pdf") is None and strict.unmatched(["a1.pdf", "b.pdf"]) == ["b.pdf"]
    assert [r.pattern for r in strict.unused(["b.pdf"])] == ["a*.pdf"]


@pytest.mark.parametrize("text, line, problem", [
    ("annotations:\n  - pattern: \"a*\"\n    context: \"ok\"\n  - pattern: \"b*\"\n", 4, "`context` is missing"),
    ("annotations:\n  - pattern: \"a*\"\n    context: \"ok\"\n    contex: \"typo\"\n", 2, "unknown key(s) contex"),
    ("annotation:\n  - {pattern: a, context: b}\n", 1, "unknown key(s) annotation"),
    ("annotations: []\n", 1, "non-empty list"),
    ("annotations:\n  - pattern: [unclosed\n", 3, "not valid YAML"),
])
def test_bad_annotation_files_name_file_and_line(tmp_path, text, line, problem):
    path = write(tmp_path / "annotations.yaml", text)
    with pytest.raises(DatasetError) as err:
        PathAnnotations.load(path)
    assert f"{path}:{line}:" in str(err.value) and problem in str(err.value)
    assert err.value.hint


def test_missing_annotation_file_says_what_to_write(tmp_path):
    with pytest.raises(DatasetError, match="No annotations file"):
        PathAnnotations.for_dataset(tmp_path)


@pytest.mark.parametrize("name", ["texas_childcare", "texas_childcare_full"])
def test_shipped_annotations_cover_every_document(name):
    root = REPO / "datasets" / name
    spec = json.loads((root / "dataset.json").read_text()) if (root / "dataset.json").exists() else {}
    ann = PathAnnotations.for_dataset(root)
    # Document names: the vendored PDFs, or (before they are vendored) the dataset's source list.
    docs_dir = root / spec.get("documents", "pdfs")
    names = sorted(p.name for p in docs_dir.glob("*.pdf")) if docs_dir.is_dir() else sorted(spec.get("source_urls", {}))
    assert names, f"no documents found for {name}"
    assert ann.unmatched(names) == []
    assert ann.unused(names) == []
    for doc in names:
        sentence = ann.context_for(doc)
        assert 30 < len(sentence) < 750, doc


# --- validation ---------------------------------------------------------------------------------
@pytest.mark.parametrize("answer, reason", [
    ("", "empty"),
    ("   ", "empty"),
    ("<context>This chunk is the BCY 2026 income table of TWC.</context>", "markup"),
    ("```\nThis chunk is the BCY 2026 income table of TWC.\n```", "markup"),
    ("## Context\nThe BCY 2026 income table of the Texas Workforce Commission.", "markup"),
    ('{"context": "The BCY 2026 income table of the Texas Workforce Commission."}', "markup"),
    ("Please give a short succinct context to situate this chunk within the overall document.", "echoes the prompt"),
    ("<document> Income Eligibility Limits", "markup"),
    (CHUNK[:120], "echoes the chunk"),
    ("Income chart.", "too short"),
    ("x" * 30, "too short"),
    (" ".join(f"term{i}" for i in range(120)), "too long"),
    ("The Texas Workforce Commission chart. " * 20, "repetitive"),
    (GOOD, None),
    ("y" * 31, None),
    ("This is a report on the Child Care Services and Family Size, which is a report on the Child Care "
     "Services and Family Size, which is a report on the Child Care Services and Family Size.", "repetitive"),
])
def test_rejection_reasons(answer, reason):
    assert rejection_reason(clean_answer(answer), CHUNK, answer) == reason


def test_clean_answer_drops_labels_and_quotes():
    assert clean_answer(f'Context: "{GOOD}"') == GOOD
    assert clean_answer(f"  {GOOD}\n") == GOOD


def test_cut_document_keeps_the_window_around_the_chunk():
    document = "A" * 5000 + " CHUNK-START the chunk text CHUNK-END " + "B" * 5000
    cut = cut_document(document, "CHUNK-START the chunk text CHUNK-END", 1000)
    assert "CHUNK-START the chunk text CHUNK-END" in cut and cut.startswith("… ") and cut.endswith(" …")
    assert len(cut) <= 1004
    assert cut_document("short", "short", 1000) == "short"
    tail = cut_document("A" * 5000 + "END", "END", 100)  # the chunk at the very end stays in
    assert tail.endswith("END") and len(tail) == 102


# --- the LLM loop (deterministic fake), cache and plan --------------------------------------------
def request() -> ContextRequest:
    return ContextRequest(DOCUMENT, CHUNK)


def test_good_answer_is_kept_and_the_prompt_holds_document_and_chunk(tmp_path):
    llm = scripted(f"Context: {GOOD}")
    with ContextCache(tmp_path / "c.sqlite") as cache:
        contexts, stats = ChunkContextualizer(llm, "test:m", cache).run([request()], progress=False)
    assert contexts == [GOOD]
    assert (stats.calls, stats.retries, stats.contextualised, stats.uncontextualised) == (1, 0, 1, 0)
    assert stats.prompt_tokens > 0 and stats.completion_tokens == 9
    [prompt] = llm.prompts
    assert f"<document>\n{DOCUMENT}\n</document>" in prompt and f"<chunk>\n{CHUNK}\n</chunk>" in prompt


def test_junk_is_retried_once_with_the_reason(tmp_path):
    llm = scripted("<b>junk</b>", GOOD)
    contexts, stats = ChunkContextualizer(llm, "test:m", None).run([request()], progress=False)
    assert contexts == [GOOD]
    assert (stats.calls, stats.retries, stats.uncontextualised) == (2, 1, 0)
    assert stats.reasons == {"markup": 1}
    assert "rejected (markup)" in llm.prompts[1] and "<b>junk</b>" in llm.prompts[1]
    assert "Do not copy the chunk" in llm.prompts[1]


def test_two_rejections_leave_the_chunk_uncontextualised_and_counted(tmp_path):
    llm = scripted(CHUNK, "short")
    with ContextCache(tmp_path / "c.sqlite") as cache:
        contextualizer = ChunkContextualizer(llm, "test:m", cache)
        contexts, stats = contextualizer.run([request()], progress=False)
        assert contexts == [None]
        assert (stats.calls, stats.contextualised, stats.uncontextualised) == (2, 0, 1)
        assert stats.reasons == {"echoes the chunk": 1, "too short": 1}
        assert "1 uncontextualised" in stats.summary()
        # the rejection is cached too: a rebuild does not pay for it again
        again, stats2 = contextualizer.run([request()], progress=False)
    assert again == [None] and stats2.calls == 0 and stats2.from_cache == 1 and stats2.uncontextualised == 1


def test_cache_hit_makes_no_call_and_never_builds_the_model(tmp_path):
    path = tmp_path / "c.sqlite"
    with ContextCache(path) as cache:
        ChunkContextualizer(scripted(GOOD), "local:m", cache).run([request()], progress=False)

    def factory():
        raise AssertionError("a fully cached run must not load the model")

    with ContextCache(path) as cache:  # a new process would reopen the file like this
        contextualizer = ChunkContextualizer(factory, "local:m", cache, context_window=4096)
        plan = plan_contexts([request()], contextualizer, "local", "m", cache)
        contexts, stats = contextualizer.run([request()], progress=False)
        assert plan.calls == 0 and not plan.needs_confirmation and "no LLM call" in plan.summary()
        assert contexts == [GOOD] and stats.calls == 0 and stats.from_cache == 1
        # another model, prompt version, chunk or document is another key
        for changed in (ChunkContextualizer(factory, "local:other", cache, context_window=4096),
                        ChunkContextualizer(factory, "local:m", cache, context_window=4096, prompt_version="v9")):
            assert not cache.contains(changed.key(request()))
        assert not cache.contains(contextualizer.key(ContextRequest(DOCUMENT + ".", CHUNK)))
        assert not cache.contains(contextualizer.key(ContextRequest(DOCUMENT, CHUNK + ".")))


def test_long_documents_are_cut_to_the_model_window():
    document = ("Filler sentence about something else entirely. " * 400) + CHUNK + (" More filler text here." * 400)
    llm = scripted(GOOD, window=1024)
    ChunkContextualizer(llm, "test:m", None).run([ContextRequest(document, CHUNK)], progress=False)
    [prompt] = llm.prompts
    assert CHUNK in prompt and len(prompt) < 1024 * 2.5 and "… " in prompt


def test_plan_thresholds():
    small = ContextPlan("local", "m", 20, 0, 20, 30_000, 1_400, 60.0, 0.0)
    assert not small.needs_confirmation and "no cost" in small.summary() and "20 LLM call(s)" in small.summary()
    assert ContextPlan("local", "m", 900, 0, 900, 10**6, 60_000, 4_000.0, 0.0).needs_confirmation
    assert ContextPlan("openai", "x", 10, 0, 10, 1000, 700, 10.0, None).needs_confirmation  # price unknown
    assert ContextPlan("openai", "gpt-5", 150, 0, 150, 10**7, 10**4, 200.0, 12.6).needs_confirmation
    assert "$12.60" in ContextPlan("openai", "gpt-5", 150, 0, 150, 10**7, 10**4, 200.0, 12.6).summary()


def test_plan_prices_cloud_calls():
    contextualizer = ChunkContextualizer(scripted(), "openai:gpt-5-mini", None, context_window=128_000)
    plan = plan_contexts([request()] * 10, contextualizer, "openai", "gpt-5-mini", None, 128_000)
    assert plan.calls == 10 and plan.cost_usd is not None and 0 < plan.cost_usd < 0.01
    assert plan.prompt_tokens > 10 * len(DOCUMENT) / 4


# --- applying contexts to nodes -------------------------------------------------------------------
def documents() -> list[Document]:
    return [Document(text="Page two text about payment rates for providers.", metadata={"doc_id": "a.pdf", "filename": "a.pdf", "page": 2}),
            Document(text="Page one text about income limits for families.", metadata={"doc_id": "a.pdf", "filename": "a.pdf", "page": 1}),
            Document(text="Another document entirely about attendance.", metadata={"doc_id": "b.pdf", "filename": "b.pdf", "page": 1})]


def test_document_texts_join_pages_in_order():
    texts = document_texts(documents())
    assert texts["a.pdf"] == "Page one text about income limits for families.\n\nPage two text about payment rates for providers."
    assert set(texts) == {"a.pdf", "b.pdf"}


def test_index_text_prepends_the_context_and_generation_keeps_the_chunk():
    nodes = chunk_documents(documents(), 50)
    apply_contexts(nodes, ["Ctx for the first chunk, from a.pdf.", None, "Ctx three."])
    assert index_text(nodes[0]) == f"Ctx for the first chunk, from a.pdf.\n\n{nodes[0].text}"
    assert index_text(nodes[1]) == nodes[1].text and CONTEXT_KEY not in nodes[1].metadata
    assert nodes[0].get_content(MetadataMode.NONE) == nodes[0].text
    assert "Ctx for the first" not in nodes[0].get_content(MetadataMode.LLM)
    assert "Ctx for the first" not in nodes[0].get_content(MetadataMode.EMBED)
    apply_contexts(nodes, ["Ctx for the first chunk, from a.pdf.", None, None], show_in_prompt=True)
    assert "Ctx for the first" in nodes[0].get_content(MetadataMode.LLM)


def test_variants_annotations_llm_and_both(tmp_path):
    (tmp_path / "annotations.yaml").write_text('annotations:\n  - {pattern: "a.pdf", context: "Annotation for document a."}\n')
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")

    nodes = chunk_documents(documents(), 50)
    report = contextualize(nodes, documents(), "annotations", settings, dataset_root=tmp_path, progress=False)
    assert [n.metadata.get(CONTEXT_KEY) for n in nodes] == ["Annotation for document a."] * 2 + [None]
    assert report.annotated == 2 and report.unannotated_documents == ["b.pdf"] and report.llm is None

    nodes = chunk_documents(documents(), 50)
    llm = scripted(GOOD, GOOD, "<x>", "<y>")
    printed: list[str] = []
    report = contextualize(nodes, documents(), "both", settings, dataset_root=tmp_path, llm=llm, progress=False,
                           echo=printed.append)
    assert nodes[0].metadata[CONTEXT_KEY] == f"Annotation for document a. {GOOD}"
    assert nodes[2].metadata.get(CONTEXT_KEY) is None  # no annotation, LLM answers rejected twice
    assert report.llm.uncontextualised == 1 and report.llm.calls == 4
    assert "3 LLM call(s)" in printed[0]
    assert any("1 uncontextualised" in line for line in report.lines())
    # the document given to the LLM is the whole file, not the page
    assert "Page one text" in llm.prompts[1] and "Page two text" in llm.prompts[1]

    nodes = chunk_documents(documents(), 50)
    again = contextualize(nodes, documents(), "llm", settings, llm=scripted(), progress=False, echo=printed.append)
    assert again.llm.calls == 0 and again.llm.from_cache == 3 and nodes[0].metadata[CONTEXT_KEY] == GOOD


def test_unconfirmed_expensive_run_stops_before_any_call(tmp_path, monkeypatch):
    monkeypatch.setattr(plan_module, "CONFIRM_CALLS", 1)
    settings = Settings(_env_file=None, data_dir=tmp_path)
    llm = scripted()
    with pytest.raises(ConfirmationRequired, match="3 LLM call") as err:
        contextualize(chunk_documents(documents(), 50), documents(), "llm", settings, llm=llm, progress=False,
                      echo=lambda _: None)
    assert "--yes" in err.value.hint and llm.prompts == []


# --- the remote path: the real OpenAI SDK over an httpx MockTransport -------------------------------
def test_openai_provider_at_the_http_layer(tmp_path, monkeypatch):
    from rag_lab.models.llm import get_llm
    from tests.models.conftest import chat_completion

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RAG_LAB_LLM_PROVIDER", "RAG_LAB_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    bodies: list[dict] = []
    answers = iter(["<context>junk</context>", GOOD, GOOD, GOOD])

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        assert str(request.url) == "https://api.openai.com/v1/chat/completions"
        return httpx.Response(200, json=chat_completion("gpt-5-mini", next(answers), 300, 20))

    settings = Settings(_env_file=None, data_dir=tmp_path, llm_provider="openai", openai_api_key="sk-test")
    llm = get_llm(settings.model_copy(update={"llm_max_tokens": 160}),
                  http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    nodes = chunk_documents(documents(), 50)
    printed: list[str] = []
    report = contextualize(nodes, documents(), "llm", settings, llm=llm, progress=False, echo=printed.append)

    assert [n.metadata[CONTEXT_KEY] for n in nodes] == [GOOD] * 3
    assert len(bodies) == 4 and report.llm.retries == 1 and report.llm.reasons == {"markup": 1}
    assert (report.llm.prompt_tokens, report.llm.completion_tokens) == (1200, 80)
    first = bodies[0]
    assert first["model"] == "gpt-5-mini" and first["max_completion_tokens"] == 160
    assert "<chunk>" in first["messages"][-1]["content"] and "Page one text" in first["messages"][-1]["content"]
    assert bodies[1]["messages"][-1]["content"].startswith("That answer was rejected (markup)")
    assert "openai:gpt-5-mini" in printed[0] and "$" in printed[0]


# --- the real local model, once ---------------------------------------------------------------------
@pytest.mark.slow
def test_real_local_model_writes_or_rejects_a_context(tmp_path):
    from rag_lab.models.llm import get_llm

    settings = Settings(_env_file=None, data_dir=tmp_path, llm_provider="local",
                        llm_model="SmolLM2-135M-Instruct.Q4_1", llm_max_tokens=64)
    llm = get_llm(settings).model_copy(update={"context_window": 768})  # short prompt: shared CPUs
    with ContextCache(tmp_path / "c.sqlite") as cache:
        contextualizer = ChunkContextualizer(llm, "local:SmolLM2", cache)
        [context], stats = contextualizer.run([request()], progress=False)
        assert stats.calls in (1, 2) and stats.prompt_tokens > 100 and stats.completion_tokens > 0
        assert stats.contextualised + stats.uncontextualised == 1
        if context is not None:  # a 135M model may fail twice; then the reasons are recorded
            assert 30 < len(context) < 750 and rejection_reason(context, CHUNK) is None
        else:
            assert sum(stats.reasons.values()) == 2
        _, again = contextualizer.run([request()], progress=False)
    assert again.calls == 0 and again.from_cache == 1
