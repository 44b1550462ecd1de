"""The ablation's run-folder caches serve only what they were made from: legs keyed by the
question's text and everything that shapes its ranking (not its ``line-N`` id), answers keyed by
the question's text, the chunks' text, the model, the prompt and the generator's sampling settings;
a damaged cache is an error naming the file and line. A stand-in index (the storage only) drives the loops; test_ablation.py runs them on
the real index."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from rag_lab.errors import DatasetError
from rag_lab.evaluate.ablation import legs as legs_module
from rag_lab.evaluate.ablation.checkpoint import read_records


def _index(backend: str = "edge", fingerprint: str = "fp1"):
    return SimpleNamespace(manifest=SimpleNamespace(fingerprint=fingerprint, backend=backend,
                                                    embed_model="minilm", contextual="none"))


class TextRetriever:
    """Legs that depend only on the question's text (what a real retriever does); counts calls."""

    calls: list[str] = []

    def __init__(self, index, legs, depth):
        self.legs = legs

    def embed(self, queries):
        return None

    def __call__(self, query, vector=None):
        TextRetriever.calls.append(query)
        hit = [(f"chunk-of-{query}", f"doc-of-{query}", 1.0)]
        return {leg: hit for leg in self.legs}, {}


def _legs(run_dir, queries, index=None):
    TextRetriever.calls = []
    questions, _ = legs_module.retrieve_legs(index or _index(), queries, run_dir, ("fusion",), 10, progress=False,
                                             retriever_factory=TextRetriever)
    return {q.qid: q.legs["dense"][0][0] for q in questions}


def test_inserting_a_line_in_qa_jsonl_never_serves_another_questions_legs(tmp_path):
    first = _legs(tmp_path, {"line-1": "What is the income limit?", "line-2": "Who pays the fee?"})
    assert first == {"line-1": "chunk-of-What is the income limit?", "line-2": "chunk-of-Who pays the fee?"}
    # a new first line: every id shifts by one
    shifted = _legs(tmp_path, {"line-1": "How many days of care?", "line-2": "What is the income limit?",
                               "line-3": "Who pays the fee?"})
    assert shifted == {"line-1": "chunk-of-How many days of care?", "line-2": "chunk-of-What is the income limit?",
                       "line-3": "chunk-of-Who pays the fee?"}
    assert TextRetriever.calls == ["How many days of care?"]  # the other two came from the cache


def test_another_vector_backend_or_index_build_retrieves_again(tmp_path):
    queries = {"line-1": "What is the income limit?"}
    _legs(tmp_path, queries, _index("edge"))
    _legs(tmp_path, queries, _index("edge"))
    assert TextRetriever.calls == []
    _legs(tmp_path, queries, _index("server"))
    assert TextRetriever.calls == ["What is the income limit?"]
    _legs(tmp_path, queries, _index("server", fingerprint="fp2"))
    assert TextRetriever.calls == ["What is the income limit?"]


def test_a_damaged_leg_cache_names_its_file_and_line(tmp_path):
    queries = {"line-1": "a?", "line-2": "b?"}
    _legs(tmp_path, queries)
    path = tmp_path / "legs.jsonl"
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1][:20] + "\x00garbage\n")
    with pytest.raises(DatasetError) as caught:
        _legs(tmp_path, queries)
    assert f"{path}: line 2" in str(caught.value) and "delete" in str(caught.value)
    # a line cut by a crash (no newline at the end) is not damage: it is redone
    path.write_text(lines[0] + "\n" + lines[1][:20])
    assert _legs(tmp_path, queries)["line-2"] == "chunk-of-b?" and TextRetriever.calls == ["b?"]


def test_a_damaged_answers_cache_names_its_file_and_line(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"context": "c1", "answer": "x"}) + "\n" + '{"context": "c2", "answer": "unterminated\n'
                    + json.dumps({"context": "c3", "answer": "z"}) + "\n")
    with pytest.raises(DatasetError, match=r"answers\.jsonl: line 2: Unterminated string") as caught:
        read_records(path, "answers", ("context", "answer"))
    assert "delete" in caught.value.hint
    path.write_text(json.dumps({"context": "c1"}) + "\n")
    with pytest.raises(DatasetError, match="line 1: not a answers record .missing answer"):
        read_records(path, "answers", ("context", "answer"))


def _answer_index(text: str):
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.utils import node_to_metadata_dict

    def payloads(ids):
        out = {}
        for i in ids:
            node = TextNode(id_=i, text=f"{text} ({i})", metadata={"filename": "guide.pdf", "page": 1})
            out[i] = node_to_metadata_dict(node, flat_metadata=True)
        return out

    return SimpleNamespace(vectors=SimpleNamespace(payloads=payloads))


def test_answers_are_regenerated_when_chunk_text_or_max_tokens_change(tmp_path, lab_settings, monkeypatch):
    from llama_index.core.llms import MockLLM

    from rag_lab.evaluate.ablation import answers
    from rag_lab.evaluate.ablation.grid import Candidates, Config, GridSpec, compute_grid

    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(5,), top_k=(2,))
    grid = compute_grid([Candidates("q1", {"dense": [("c1", "guide.pdf", 0.9), ("c2", "guide.pdf", 0.8)],
                                           "bm25": [("c1", "guide.pdf", 3.0)]})], spec)
    configs = [Config("fusion", 60, 5, 1.0, 1.0, 2)]
    queries = {"q1": "What is the fee?"}
    generated = []
    from rag_lab.answer import engine as engine_module

    original = engine_module.build_engine

    def counting_build(*args, **kwargs):
        generated.append(kwargs.get("llm"))
        return original(*args, **kwargs)

    monkeypatch.setattr(engine_module, "build_engine", counting_build)
    settings = lab_settings.model_copy(update={"compress": "off"})

    def run(index, settings=settings, llm=None):
        before = len(generated)
        answers.generate_answers(index, settings, grid, configs, queries, tmp_path, ["q1"], progress=False,
                                 llm=llm or MockLLM(max_tokens=8))
        return len(generated) - before

    assert run(_answer_index("Fee is $5")) == 1
    assert run(_answer_index("Fee is $5")) == 0  # cached
    assert run(_answer_index("Fee is $7")) == 1  # same chunk ids, rebuilt with other text
    assert run(_answer_index("Fee is $7"), llm=MockLLM(max_tokens=64)) == 1  # other max tokens


def test_the_generator_key_holds_max_tokens_and_temperature(lab_settings):
    from rag_lab.evaluate.ablation.answers import generator_id

    keys = {generator_id(lab_settings.model_copy(update=change)) for change in
            ({}, {"llm_max_tokens": 64}, {"llm_temperature": 0.7})}
    assert len(keys) == 3


class DepthRetriever:
    """A leg per asked leg, exactly ``depth`` hits deep (what a real retriever returns); records
    the depth and legs each retriever was built with."""

    built: list[tuple[int, tuple[str, ...]]] = []

    def __init__(self, index, legs, depth):
        self.legs, self.depth = list(legs), depth
        DepthRetriever.built.append((depth, tuple(legs)))

    def embed(self, queries):
        return None

    def __call__(self, query, vector=None):
        return {leg: [(f"{leg}-{query}-{i}", f"doc-{i}", 1.0 / (i + 1)) for i in range(self.depth)]
                for leg in self.legs}, {}


def _depth_legs(run_dir, queries, modes, depth):
    questions, _ = legs_module.retrieve_legs(_index(), queries, run_dir, modes, depth, progress=False,
                                             retriever_factory=DepthRetriever)
    return {q.qid: q.legs for q in questions}


def test_a_new_question_in_a_deeper_cache_is_retrieved_at_the_caches_depth(tmp_path):
    _depth_legs(tmp_path, {"a": "first?"}, ("fusion",), 100)
    # a shallower grid in the same folder reuses the 100-deep cache; its new question must be cached 100 deep too
    shallow = _depth_legs(tmp_path, {"a": "first?", "b": "second?"}, ("fusion",), 20)
    assert {len(leg) for legs in shallow.values() for leg in legs.values()} == {20}
    deep = _depth_legs(tmp_path, {"a": "first?", "b": "second?"}, ("fusion",), 100)
    assert {qid: len(legs["dense"]) for qid, legs in deep.items()} == {"a": 100, "b": 100}
    assert {qid: len(legs["bm25"]) for qid, legs in deep.items()} == {"a": 100, "b": 100}
    assert json.loads((tmp_path / "legs.meta.json").read_text())["depth"] == 100


def test_a_new_question_in_a_cache_with_more_legs_gets_every_cached_leg(tmp_path):
    _depth_legs(tmp_path, {"a": "first?"}, ("fusion", "hybrid"), 10)
    DepthRetriever.built = []
    _depth_legs(tmp_path, {"a": "first?", "b": "second?"}, ("fusion",), 10)  # needs only dense and bm25
    assert DepthRetriever.built == [(10, ("dense", "bm25", "sparse"))]
    hybrid = _depth_legs(tmp_path, {"a": "first?", "b": "second?"}, ("hybrid",), 10)
    assert DepthRetriever.built == [(10, ("dense", "bm25", "sparse"))]  # all from the cache
    assert hybrid["b"]["sparse"][0][0] == "sparse-second?-0"


def test_a_cache_keyed_another_way_is_moved_aside(tmp_path):
    queries = {"line-1": "What is the income limit?"}
    _legs(tmp_path, queries)
    meta = json.loads((tmp_path / "legs.meta.json").read_text())
    del meta["keyed_by"]  # a cache written before lines were keyed by the question text alone
    (tmp_path / "legs.meta.json").write_text(json.dumps(meta))
    _legs(tmp_path, queries)
    assert TextRetriever.calls == ["What is the income limit?"] and (tmp_path / "legs.jsonl.old").exists()


@pytest.fixture
def answer_on_a_server(fake_openai, lab_settings, tmp_path):
    """``generate_answers`` through its real generator path (settings → OpenAI-compatible LLM →
    the real openai SDK over HTTP to a fake server): ``run(question=…, model=…)`` returns the
    requests that run sent to the server (none = every answer came from answers.jsonl)."""
    from rag_lab.evaluate.ablation import answers
    from rag_lab.evaluate.ablation.grid import Candidates, Config, GridSpec, compute_grid

    server = fake_openai(reply=lambda prompt: "The fee is $5 [Doc 1].")
    spec = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(5,), top_k=(2,))
    grid = compute_grid([Candidates("q1", {"dense": [("c1", "guide.pdf", 0.9), ("c2", "guide.pdf", 0.8)],
                                           "bm25": [("c1", "guide.pdf", 3.0)]})], spec)
    configs = [Config("fusion", 60, 5, 1.0, 1.0, 2)]
    index = _answer_index("Fee is $5")

    def run(question: str = "What is the fee?", model: str = "model-a"):
        settings = lab_settings.model_copy(update={"compress": "off", "llm_provider": "openai_compatible",
                                                   "llm_base_url": server.url, "llm_model": model})
        before = len(server.requests)
        rows = answers.generate_answers(index, settings, grid, configs, {"q1": question}, tmp_path, ["q1"],
                                        progress=False)
        assert [r["answer"] for r in rows] == ["The fee is $5 [Doc 1]."]
        return server.requests[before:]

    return run


def test_a_changed_question_text_is_answered_anew(answer_on_a_server):
    first = answer_on_a_server("What is the fee?")
    assert len(first) == 1 and "What is the fee?" in first[0].prompt
    assert answer_on_a_server("What is the fee?") == []  # cached
    edited = answer_on_a_server("What is the late fee?")  # same qid, same chunks, another question
    assert len(edited) == 1 and "What is the late fee?" in edited[0].prompt


def test_another_model_is_asked_not_served_the_first_models_answer(answer_on_a_server):
    assert [r.model for r in answer_on_a_server(model="model-a")] == ["model-a"]
    assert answer_on_a_server(model="model-a") == []
    assert [r.model for r in answer_on_a_server(model="model-b")] == ["model-b"]


def test_a_changed_answer_prompt_is_answered_anew(answer_on_a_server, monkeypatch):
    from llama_index.core.prompts import PromptTemplate

    from rag_lab.answer import engine, prompt

    assert len(answer_on_a_server()) == 1 and answer_on_a_server() == []
    # an edit of the answer prompt's text (what prompt_version hashes; the engine sends ANSWER_PROMPT)
    edited = prompt.ANSWER_PROMPT_TMPL.replace("{query_str}", "{query_str}\nAnswer in one sentence.")
    assert edited != prompt.ANSWER_PROMPT_TMPL
    monkeypatch.setattr(prompt, "ANSWER_PROMPT_TMPL", edited)
    monkeypatch.setattr(engine, "ANSWER_PROMPT", PromptTemplate(edited))
    again = answer_on_a_server()
    assert len(again) == 1 and "Answer in one sentence." in again[0].prompt
