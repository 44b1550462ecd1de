"""`synth` with a deterministic question writer: spread sampling, the output lines, the cache and
resume, the human file never touched, and the bad inputs refused in one line."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.errors import ConfigError, DatasetError
from rag_lab.evaluate.questions import SynthStopped, synth
from rag_lab.evaluate.questions.records import summary_path
from rag_lab.evaluate.questions.sampling import SourceChunk, corpus_chunks, spread_order
from tests.questions.fakes import FakeQuestionLLM


def _chunks(sizes: dict[str, int]) -> list[SourceChunk]:
    return [SourceChunk(f"{doc}#c{i}", f"n-{doc}-{i}", doc, f"text {doc} {i}") for doc, n in sizes.items()
            for i in range(n)]


def test_every_document_gets_its_share_before_any_gets_two():
    chunks = _chunks({"a": 5, "b": 1, "c": 3, "d": 2})
    order = spread_order(chunks, seed=0)
    assert sorted(c.chunk_id for c in order) == sorted(c.chunk_id for c in chunks)  # each chunk once
    assert {c.document for c in order[:4]} == {"a", "b", "c", "d"}
    assert Counter(c.document for c in order[:7]) == {"a": 2, "b": 1, "c": 2, "d": 2}  # b has no second chunk


def test_the_draw_is_seeded():
    chunks = _chunks({"a": 4, "b": 4, "c": 4})
    ids = lambda seed: [c.chunk_id for c in spread_order(chunks, seed)]  # noqa: E731
    assert ids(3) == ids(3)  # the same seed, the same draw
    assert len({tuple(ids(seed)) for seed in range(6)}) > 1  # another seed, another draw


def test_synth_writes_qa_lines_with_their_source_origin_and_generator(corpus, small_settings):
    dataset = resolve_dataset(corpus)
    human_before = (corpus / "qa.jsonl").read_bytes()
    llm = FakeQuestionLLM()
    outcome = synth(dataset, small_settings, n=4, llm=llm, progress=False)
    lines = [json.loads(x) for x in (corpus / "qa.synthetic.jsonl").read_text().splitlines()]
    assert len(lines) == outcome.made == 4
    assert {line["source_file"] for line in lines} == {"guide0.txt", "guide1.txt", "guide2.txt", "guide3.txt"}
    for line in lines:
        assert line["origin"] == "synthetic" and line["prompt_version"] and line["generator"].startswith("object:")
        assert line["source_chunk"].startswith(line["source_file"] + "#c") and line["kind"]
    summary = json.loads(summary_path(corpus / "qa.synthetic.jsonl").read_text())
    assert summary["made"] == 4 and summary["candidates"] == 4 + sum(summary["rejected"].values())
    assert (corpus / "qa.jsonl").read_bytes() == human_before  # the human file is never written
    # the synthetic lines load as any question file, with document-level relevance
    from rag_lab.evaluate.questions.question_set import with_questions

    queries, qrels = with_questions(dataset, "synthetic").judged_queries()
    assert len(queries) == 4 and all(len(judged) == 1 for judged in qrels.values())


def test_a_second_run_makes_no_llm_call(corpus, small_settings):
    dataset = resolve_dataset(corpus)
    first = synth(dataset, small_settings, n=3, llm=FakeQuestionLLM(), progress=False)
    again = FakeQuestionLLM()
    second = synth(dataset, small_settings, n=3, llm=again, progress=False)
    assert again.calls == 0 and second.cached == first.calls
    assert [r["id"] for r in second.records] == [r["id"] for r in first.records]


def test_a_provider_failing_half_way_keeps_what_was_made_and_the_rerun_resumes(corpus, small_settings):
    dataset = resolve_dataset(corpus)
    with pytest.raises(SynthStopped, match=r"2 of 5 questions made.*\n.*run the same rag-lab synth command again"):
        synth(dataset, small_settings, n=5, llm=FakeQuestionLLM(fail_after=2), progress=False)
    kept = [json.loads(x) for x in (corpus / "qa.synthetic.jsonl").read_text().splitlines()]
    assert len(kept) == 2
    resumed = FakeQuestionLLM()
    outcome = synth(dataset, small_settings, n=5, llm=resumed, progress=False)
    assert outcome.made == 5 and resumed.calls == 3 and outcome.cached == 2  # nothing asked twice
    assert [r["id"] for r in outcome.records[:2]] == [r["id"] for r in kept]


def test_rejections_are_counted_by_reason(corpus, small_settings):
    def lazy(passage: str):
        return "What does the passage say about the program?", "it reimburses providers"

    outcome = synth(resolve_dataset(corpus), small_settings, n=2, llm=FakeQuestionLLM(reply=lazy), progress=False,
                    out=corpus / "lazy.jsonl")
    assert outcome.made == 0 and outcome.rejected == {"not_self_contained": outcome.candidates}
    assert json.loads(summary_path(corpus / "lazy.jsonl").read_text())["rejected"] == outcome.rejected


def test_out_naming_the_human_file_is_refused(corpus, small_settings):
    with pytest.raises(ConfigError, match="human question file"):
        synth(resolve_dataset(corpus), small_settings, n=1, out=corpus / "qa.jsonl", llm=FakeQuestionLLM())


def test_n_above_the_chunks_says_how_many_it_can_make(corpus, small_settings):
    dataset = resolve_dataset(corpus)
    available = len(corpus_chunks(dataset, small_settings))
    with pytest.raises(DatasetError, match=rf"{available} chunk\(s\).*\n.*--n {available} or fewer"):
        synth(dataset, small_settings, n=available + 1, llm=FakeQuestionLLM())


def test_a_corpus_without_text_is_refused(tmp_path, small_settings):
    empty = tmp_path / "blank"
    empty.mkdir()
    (empty / "note.txt").write_text("too short\n")
    with pytest.raises(DatasetError, match="no indexable text"):
        synth(resolve_dataset(empty), small_settings, n=1, llm=FakeQuestionLLM())


def test_the_dry_run_calls_nothing_and_counts_cached_replies(corpus, small_settings):
    dataset = resolve_dataset(corpus)
    llm = FakeQuestionLLM()
    before = synth(dataset, small_settings, n=3, llm=llm, dry_run=True)
    assert llm.calls == 0 and before.from_cache == 0 and before.calls >= 3 and before.cost_usd != before.cost_usd
    synth(dataset, small_settings, n=3, llm=llm, progress=False)
    after = synth(dataset, small_settings, n=3, llm=llm, dry_run=True)
    assert after.from_cache == 3 and after.calls == 0


def test_the_output_converts_to_a_ragas_testset(corpus, small_settings):
    from rag_lab.evaluate.questions.ragas_types import to_testset

    dataset = resolve_dataset(corpus)
    outcome = synth(dataset, small_settings, n=2, llm=FakeQuestionLLM(), progress=False)
    texts = {c.chunk_id: c.text for c in corpus_chunks(dataset, small_settings)}
    testset = to_testset(outcome.records, texts)
    samples = testset.to_evaluation_dataset().samples
    assert [s.user_input for s in samples] == [r["question"] for r in outcome.records]
    assert all(s.reference_contexts == [texts[r["source_chunk"]]] for s, r in zip(samples, outcome.records))


def test_the_command_refuses_bad_input_in_one_line_with_rc_2(lab_cli, corpus):
    code, _, err = lab_cli("synth", str(corpus), "--out", str(corpus / "qa.jsonl"))
    assert code == 2 and "human question file" in err and "→" in err
    code, _, err = lab_cli("synth", str(corpus), "--n", "100000")
    assert code == 2 and "can make" in err and "--n" in err
    assert not (corpus / "qa.synthetic.jsonl").exists()


def test_ctrl_c_keeps_what_was_made(corpus, small_settings):
    dataset = resolve_dataset(corpus)
    with pytest.raises(SynthStopped, match=r"interrupted \(Ctrl-C\): 3 of 5"):
        synth(dataset, small_settings, n=5, llm=FakeQuestionLLM(fail_after=3, failure=KeyboardInterrupt), progress=False)
    assert len((corpus / "qa.synthetic.jsonl").read_text().splitlines()) == 3
    resumed = FakeQuestionLLM()
    assert synth(dataset, small_settings, n=5, llm=resumed, progress=False).made == 5 and resumed.calls == 2


def test_max_cost_stops_before_the_budget_and_keeps_what_was_made(corpus, small_settings, monkeypatch):
    import sys
    from types import SimpleNamespace

    per_call = SimpleNamespace(cost=lambda prompt_tokens, completion_tokens: 0.01)  # a priced provider: 1 cent a call
    monkeypatch.setattr(sys.modules["rag_lab.evaluate.questions.make"], "_generator",
                        lambda settings, given, dry_run: ("fake:priced", per_call, given))
    llm = FakeQuestionLLM()
    with pytest.raises(SynthStopped, match=r"--max-cost \$0\.0250.*2 of 5"):
        synth(resolve_dataset(corpus), small_settings, n=5, llm=llm, progress=False, max_cost=0.025)
    assert llm.calls == 2 and len((corpus / "qa.synthetic.jsonl").read_text().splitlines()) == 2


def test_the_synthetic_files_are_never_read_as_documents(corpus, small_settings):
    dataset = resolve_dataset(corpus)
    synth(dataset, small_settings, n=1, llm=FakeQuestionLLM(), progress=False)
    assert {p.name for p in resolve_dataset(corpus).corpus_files} == {f"guide{i}.txt" for i in range(4)}
    assert resolve_dataset(corpus).load_documents()[1].to_dict()["skipped"] == []
