"""Run and data integrity (issues 20 and 23): one document key, IR checkpoints keyed by question
text, resume only of an identical configuration, damaged files named, --top-k validated, questions
out of the index fingerprint — on a small folder dataset with a real index, through the real CLI."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import pytest

from rag_lab.cli.main import main
from rag_lab.config import get_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.errors import ConfigError, DatasetError
from tests.answer.conftest import ScriptedLLM
from tests.builders import write_folder_dataset, write_qa
from tests.evaluate.conftest import quoting_answer

DOCS = {
    "sub/cats.txt": "Cats purr when content. A house cat sleeps sixteen hours a day and costs $40 a month to feed.",
    "other/dogs.txt": "Dogs bark at strangers. A puppy needs three walks a day and costs $90 a month to feed.",
    "birds.txt": "Parrots can mimic speech. A budgie lives about seven years and costs $10 a month to feed.",
}
QA = [
    {"id": "cats", "question": "How many hours does a house cat sleep?", "reference_answer": "sixteen",
     "source_file": "sub/cats.txt"},
    {"id": "dogs", "question": "How many walks a day does a puppy need?", "reference_answer": "three",
     "source_file": "dogs.txt"},  # a base name: accepted, it is unambiguous
    {"id": "birds", "question": "How long does a budgie live?", "reference_answer": "seven years",
     "source_file": "birds.txt"},
]


def make_folder(root, qa=QA, docs=DOCS):
    return write_folder_dataset(root, docs, qa)


@pytest.fixture(scope="module")
def pets(tmp_path_factory, lab_settings):
    """The folder dataset with its real index (MiniLM embeddings, Qdrant, bm25s)."""
    from rag_lab.index import build_index

    root = make_folder(tmp_path_factory.mktemp("pets") / "pets")
    build_index(resolve_dataset(root), lab_settings, progress=False)
    return root


# -- one document key: the path relative to the documents folder ------------------------------------

def test_source_files_become_paths_relative_to_the_documents_folder(tmp_path):
    root = make_folder(tmp_path / "d", qa=[*QA, {"id": "x", "question": "q?", "source_file": "docs/other/dogs.txt"}])
    dataset = resolve_dataset(root)
    assert dataset.load_qrels() == {"cats": {"sub/cats.txt": 1}, "dogs": {"other/dogs.txt": 1},
                                    "birds": {"birds.txt": 1}, "x": {"other/dogs.txt": 1}}
    documents, _ = dataset.load_documents()
    from rag_lab.retrieve.records import doc_key

    assert {doc_key(d.metadata) for d in documents} == set(DOCS)  # chunks carry the same key
    assert {d.metadata["filename"] for d in documents} == {"cats.txt", "dogs.txt", "birds.txt"}  # citations show names


def test_an_ambiguous_base_name_is_an_error_naming_both_files(tmp_path):
    docs = {**DOCS, "a/notes.txt": "one", "b/notes.txt": "two"}
    root = make_folder(tmp_path / "d", qa=[*QA, {"question": "which?", "source_file": "notes.txt"}], docs=docs)
    with pytest.raises(DatasetError, match=r"qa.jsonl: line 4: source_file 'notes.txt' is ambiguous: "
                                           r"a/notes.txt and b/notes.txt"):
        resolve_dataset(root).load_qa()


def test_a_source_file_naming_no_document_is_unjudgeable_and_warned_once(tmp_path):
    qa = [*QA, {"id": "ghost", "question": "q1?", "source_file": "does-not-exist.pdf"},
          {"id": "ghost2", "question": "q2?", "source_file": "does-not-exist.pdf"},
          {"id": "etc", "question": "q3?", "source_file": "../../etc/passwd"}]
    dataset = resolve_dataset(make_folder(tmp_path / "d", qa=qa))
    with pytest.warns(Warning) as caught:
        pairs = {p.id: p for p in dataset.load_qa()}
        dataset.load_qrels()  # loads the file again: no second warning
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2, messages  # once per unknown file name
    assert "line 4 and 1 more: source_file 'does-not-exist.pdf' names no document" in messages[0]
    assert "'../../etc/passwd'" in messages[1] and "unjudgeable" in messages[1]
    assert pairs["ghost"].unjudgeable and pairs["etc"].unjudgeable and not pairs["cats"].unjudgeable
    assert set(dataset.load_qrels()) == {"cats", "dogs", "birds"}  # not judged as a real 0
    assert sorted(dataset.unjudgeable_questions()) == ["etc", "ghost", "ghost2"]


def test_ir_scores_a_source_file_given_as_a_sub_path(pets, lab_cli, tmp_path):
    code, out, err = lab_cli("ir", str(pets), "--modes", "bm25,dense", "--json", str(tmp_path / "ir.json"))
    assert code == 0, err
    data = json.loads((tmp_path / "ir.json").read_text())
    assert data["queries"]["evaluated"] == 3
    for mode in ("bm25", "dense"):
        # each question names its own document, which the easy corpus ranks first
        assert data["per_query"][mode]["mrr@10"]["cats"] == 1.0, data["per_query"][mode]
        assert data["results"][mode]["mrr@10"] == 1.0


def test_ir_counts_unjudgeable_questions_and_leaves_them_out(pets, lab_cli, tmp_path):
    root = make_folder(tmp_path / "ghosts", qa=[*QA, {"id": "ghost", "question": "How long does a budgie live?",
                                                    "source_file": "does-not-exist.pdf"}])
    code, out, err = lab_cli("ir", str(root), "--modes", "bm25", "--json", str(tmp_path / "ir.json"))
    assert code == 0, err
    assert "names no document" in err and err.count("does-not-exist.pdf") == 1
    data = json.loads((tmp_path / "ir.json").read_text())
    assert data["queries"]["evaluated"] == 3 and data["queries"]["unjudgeable"] == 1
    assert "ghost" not in data["per_query"]["bm25"]["mrr@10"] and data["results"]["bm25"]["mrr@10"] == 1.0
    assert "1 unjudgeable question(s) left out" in out


# -- IR checkpoints keyed by question text ----------------------------------------------------------

def test_inserting_a_line_in_qa_does_not_serve_another_questions_retrieval(tmp_path, lab_settings):
    from rag_lab.evaluate.retrieval import ir
    from rag_lab.index import build_index

    qa = [{k: v for k, v in q.items() if k != "id"} for q in QA]  # ids default to line-N
    root = make_folder(tmp_path / "shift", qa=qa)
    dataset = resolve_dataset(root)
    build_index(dataset, lab_settings, progress=False)
    first = ir.evaluate_modes(dataset, lab_settings, ["bm25"], progress=False)
    assert first.per_query["bm25"]["mrr@10"] == {"line-1": 1.0, "line-2": 1.0, "line-3": 1.0}
    # a new first line: every id shifts by one (line-2 is now the cat question, and so on)
    write_qa(root, [{"question": "Which animal can mimic speech?", "source_file": "birds.txt"}, *qa])
    resumed = ir.evaluate_modes(resolve_dataset(root), lab_settings, ["bm25"], progress=False)
    fresh = ir.evaluate_modes(resolve_dataset(root), lab_settings, ["bm25"], progress=False, resume=False)
    assert resumed.per_query == fresh.per_query
    assert resumed.per_query["bm25"]["mrr@10"]["line-2"] == 1.0  # the cat question's own ranking


class _TextRetrieverFactory:
    """Stands in for build_retriever on a stand-in index: each question's ranking depends only on its
    text; records every retrieval and the parameters each retriever was built with."""

    def __init__(self):
        self.retrieved, self.built = [], []

    def __call__(self, mode, settings, dataset, contextual=None, top_k=10, **params):
        from llama_index.core.schema import NodeWithScore, TextNode

        self.built.append(params)

        def retrieve(text):
            self.retrieved.append(text)
            return [NodeWithScore(node=TextNode(text=text, metadata={"doc_id": f"doc-of-{text}"}), score=1.0)]

        return SimpleNamespace(retrieve=retrieve)


@pytest.fixture
def stand_in_ir(monkeypatch, lab_settings, tmp_path):
    from rag_lab.evaluate.retrieval import ir

    index = SimpleNamespace(manifest=SimpleNamespace(fingerprint="fp"),
                            paths=SimpleNamespace(backend="edge", root=tmp_path / "stand-in-index"))
    monkeypatch.setattr(ir.CorpusIndex, "open", lambda *a, **kw: index)
    factory = _TextRetrieverFactory()
    monkeypatch.setattr(ir, "build_retriever", factory)
    settings = lab_settings.model_copy(update={"data_dir": tmp_path / "data"})

    def run(queries, params=None, mode="fusion"):
        factory.retrieved.clear()
        found = ir.run_mode(mode, None, settings, queries, params, progress=False)
        return {q: next(iter(docs)) for q, docs in found.run.items()}, list(factory.retrieved)

    return run


def test_ir_checkpoint_misses_when_a_questions_text_changes_under_the_same_id(stand_in_ir):
    assert stand_in_ir({"line-1": "How long does a budgie live?"}) == (
        {"line-1": "doc-of-How long does a budgie live?"}, ["How long does a budgie live?"])
    assert stand_in_ir({"line-1": "How long does a budgie live?"})[1] == []  # checkpointed
    edited = stand_in_ir({"line-1": "How long does a parrot live?"})
    assert edited == ({"line-1": "doc-of-How long does a parrot live?"}, ["How long does a parrot live?"])


def test_ir_checkpoint_is_keyed_by_the_effective_parameters(stand_in_ir, monkeypatch):
    import dataclasses

    from rag_lab.retrieve import configuration

    queries = {"q": "cats?"}
    assert stand_in_ir(queries)[1] == ["cats?"]
    assert stand_in_ir(queries, {"fusion_k": configuration.DEFAULTS.fusion_k})[1] == []  # the default, said out loud
    assert stand_in_ir(queries, {"fusion_k": None, "prefetch": 100})[1] == []  # None = not given
    assert stand_in_ir(queries, {"fusion_k": 1})[1] == ["cats?"]  # another parameter value
    assert stand_in_ir(queries, {"fusion_k": 1})[1] == []
    assert stand_in_ir(queries, {"dense_weight": 0.5})[1] == ["cats?"]
    # a changed default changes what an omitted parameter means: the old checkpoint is not served
    # (the one place the default is written: the lab's RetrievalConfig)
    monkeypatch.setattr(configuration, "DEFAULTS", dataclasses.replace(configuration.DEFAULTS, prefetch=50))
    assert stand_in_ir(queries)[1] == ["cats?"]


# -- questions are not part of the index ------------------------------------------------------------

def test_editing_qa_jsonl_neither_rebuilds_the_index_nor_changes_its_fingerprint(tmp_path, lab_settings):
    from rag_lab.index import build_index

    root = tmp_path / "flat"  # no dataset.json: qa.jsonl lies among the documents
    root.mkdir()
    for rel, text in DOCS.items():
        (root / rel.rsplit("/", 1)[-1]).write_text(text, encoding="utf-8")
    write_qa(root, [{**q, "source_file": q["source_file"].rsplit("/", 1)[-1]} for q in QA])
    first = build_index(resolve_dataset(root), lab_settings, progress=False)
    write_qa(root, [{"question": "A new question?", "source_file": "cats.txt"}])
    again = build_index(resolve_dataset(root), lab_settings, progress=False)
    assert again.up_to_date and again.manifest.fingerprint == first.manifest.fingerprint


# -- eval --resume: one configuration per run folder ------------------------------------------------

def _eval(pets, lab_settings, out, modes=("bm25",), **kw):
    from rag_lab.evaluate import run_evaluation

    llm = ScriptedLLM(script=quoting_answer, model_name=kw.pop("model_name", "scripted-integrity"))
    return run_evaluation(str(pets), lab_settings, list(modes), out, rerank=False, progress=False, llm=llm, **kw)


def test_resume_refuses_another_configuration_naming_what_differs(pets, lab_settings, tmp_path):
    out = tmp_path / "run"
    _eval(pets, lab_settings, out, top_k=5)
    before = (out / "bm25" / "samples.jsonl").read_text()
    with pytest.raises(ConfigError, match=r"cannot resume a run of another configuration \(top-k: 5 → 3\)"):
        _eval(pets, lab_settings, out, resume=True, top_k=3)
    with pytest.raises(ConfigError, match=r"model: 'object:ScriptedLLM:scripted-integrity' → "
                                          r"'object:ScriptedLLM:another-model'"):
        _eval(pets, lab_settings, out, resume=True, top_k=5, model_name="another-model")
    with pytest.raises(ConfigError, match=r"rerank: False → True"):
        from rag_lab.evaluate import run_evaluation

        run_evaluation(str(pets), lab_settings, ["bm25"], out, resume=True, rerank=True, progress=False,
                       llm=ScriptedLLM(script=quoting_answer, model_name="scripted-integrity"), top_k=5)
    assert (out / "bm25" / "samples.jsonl").read_text() == before  # nothing written by a refused resume
    assert json.loads((out / "manifest.json").read_text())["config"]["params"] == {"top_k": 5}


def test_resume_may_add_modes_and_tables_read_only_the_manifests_modes(pets, lab_settings, tmp_path):
    out = tmp_path / "run"
    _eval(pets, lab_settings, out, modes=("bm25",))
    run = _eval(pets, lab_settings, out, modes=("dense",), resume=True)  # adding a mode is fine
    assert list(run.modes["mode"]) == ["bm25", "dense"]
    assert json.loads((out / "manifest.json").read_text())["config"]["modes"] == ["bm25", "dense"]
    # a new run (no --resume) of another configuration in the same folder: refused; force moves the old one aside
    with pytest.raises(ConfigError, match=r"holds an eval run of pets .*another configuration \(top-k"):
        _eval(pets, lab_settings, out, modes=("bm25",), top_k=3)
    with pytest.warns(UserWarning, match="--force: moved an eval run of pets"):
        run = _eval(pets, lab_settings, out, modes=("bm25",), top_k=3, force=True)
    assert list(run.modes["mode"]) == ["bm25"] and set(run.samples["mode"]) == {"bm25"}
    assert not (out / "dense").exists()
    [aside] = out.parent.glob("run.moved-*")
    assert (aside / "dense" / "samples.jsonl").exists() and (aside / "bm25" / "samples.jsonl").exists()


# -- damaged files ----------------------------------------------------------------------------------

def test_garbage_manifest_under_resume_names_the_file_and_line(pets, lab_cli, tmp_path, monkeypatch):
    out = tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_text("\n{not json", encoding="utf-8")
    code, _, err = lab_cli("eval", str(pets), "--modes", "bm25", "--out", str(out), "--resume")
    assert code == 2
    assert f"{out / 'manifest.json'}: line 2 column 2" in err and "damaged" in err and "drop --resume" in err


def test_a_broken_middle_line_of_samples_is_named_and_report_fails(pets, lab_settings, lab_cli, tmp_path):
    out = tmp_path / "run"
    _eval(pets, lab_settings, out)
    samples = out / "bm25" / "samples.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1][:40] + "\x01" + lines[1][40:]  # a control character inside a JSON string
    samples.write_text("".join(lines), encoding="utf-8")
    code, _, err = lab_cli("report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 2 and f"{samples}: line 2 is not JSON" in err and "remove or fix that line" in err
    assert "Invalid control character at column" in err and "at at" not in err
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(DatasetError, match=r"samples.jsonl: line 2 is not JSON \(Invalid control character"):
        _eval(pets, lab_settings, out, resume=True)  # eval --resume of the same configuration


@pytest.mark.parametrize("field, value, said", [
    ("scores", "oops", "'scores' is a string, expected an object"),
    ("scores", {"rouge_l": "high"}, "scores['rouge_l'] is a string, expected a number or null"),
    ("contexts", {"text": "x"}, "'contexts' is an object, expected an array"),
    ("latency", [1, 2], "'latency' is an array, expected an object"),
    ("error", 42, "'error' is a number, expected a string"),
])
def test_a_wrongly_typed_field_is_named_by_file_and_line(pets, lab_settings, lab_cli, tmp_path, field, value, said):
    out = tmp_path / "run"
    _eval(pets, lab_settings, out)
    samples = out / "bm25" / "samples.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[1])
    record[field] = value  # valid JSON, the wrong shape
    lines[1] = json.dumps(record) + "\n"
    samples.write_text("".join(lines), encoding="utf-8")
    code, _, err = lab_cli("report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "Traceback" not in err, err
    assert f"{samples}: line 2 is not a sample record ({said}; the run folder is damaged)" in err
    assert err.count("→") == 1 and not (tmp_path / "r.html").exists()
    with pytest.raises(DatasetError, match="line 2 is not a sample record"):
        _eval(pets, lab_settings, out, resume=True)


def test_a_manifest_of_the_wrong_shape_is_named(pets, lab_settings, lab_cli, tmp_path):
    out = tmp_path / "run"
    _eval(pets, lab_settings, out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    (out / "manifest.json").write_text(json.dumps({**manifest, "config": ["bm25"]}), encoding="utf-8")
    code, _, err = lab_cli("report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "Traceback" not in err, err
    assert f"{out / 'manifest.json'}: 'config' is list, expected a JSON object" in err
    (out / "manifest.json").write_text("[1, 2]", encoding="utf-8")
    code, _, err = lab_cli("report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "expected a JSON object, got list" in err and "Traceback" not in err


def test_a_cut_off_last_line_is_skipped_with_a_note_in_table_and_report(pets, lab_settings, lab_cli, tmp_path):
    out = tmp_path / "run"
    _eval(pets, lab_settings, out)
    samples = out / "bm25" / "samples.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    samples.write_text("".join(lines[:2]) + lines[2][:100], encoding="utf-8")  # SIGKILL mid-write
    from rag_lab.cli.eval import render_eval_table
    from rag_lab.evaluate import load_run

    table = render_eval_table(load_run(out))
    assert "note: bm25: 2 of 3 samples: the last line of" in table
    code, _, err = lab_cli("report", str(out), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert "2 of 3 samples" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_non_utf8_qa_file_names_the_file_and_line(tmp_path, lab_cli):
    root = make_folder(tmp_path / "latin")
    with (root / "qa.jsonl").open("ab") as handle:
        handle.write('{"question": "caf\u00e9?"}\n'.encode("latin-1"))
    code, _, err = lab_cli("ir", str(root), "--modes", "bm25")
    assert code == 2 and f"{root / 'qa.jsonl'}: line 4 is not UTF-8 text" in err and "save the file as UTF-8" in err


# -- command-line validation ------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ("eval", "pets", "--top-k", "0"), ("eval", "pets", "--top-k", "-3"), ("eval", "pets", "--top-n", "0"),
    ("search", "pets", "cats", "--top-k", "0"), ("ask", "pets", "cats?", "--top-k", "-3"),
    ("chat", "pets", "--top-k", "0"), ("ir", "pets", "--limit", "0"), ("eval", "pets", "--limit", "-1"),
    ("search", "pets", "cats", "--mode", "bm25", "--top-k", "-2"),
])
def test_counts_below_one_are_refused_at_the_command_line(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:  # refused by the argument parser, before any work
        main(list(argv))
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert f"argument {argv[-2]}: must be ≥ 1, got {argv[-1]}" in err
    assert "Traceback" not in err


# -- quiet terminal, clear errors -------------------------------------------------------------------

def test_ragas_error_logs_go_to_the_log_file_not_stderr(lab_cli, lab_settings, monkeypatch):
    from rag_lab.cli import commands

    def add_noisy(sub, common):
        p = sub.add_parser("noisy")
        p.set_defaults(handler=lambda args: logging.getLogger("ragas.prompt.pydantic_prompt").error(
            "Prompt fix_output_format failed to parse output") or 0)

    monkeypatch.setattr(commands, "REGISTRY", [*commands.REGISTRY, add_noisy])
    code, out, err = lab_cli("noisy")
    assert code == 0 and "ragas" not in err and "fix_output_format" not in err
    log = (lab_settings.data_dir / "logs" / "rag-lab.log").read_text(encoding="utf-8")
    assert "ragas.prompt.pydantic_prompt: Prompt fix_output_format failed to parse output" in log


def test_an_unreachable_qdrant_url_is_one_line_without_traceback(pets, lab_cli, monkeypatch, tmp_path):
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("QDRANT_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("RAG_LAB_REQUEST_TIMEOUT", "5")
    monkeypatch.setenv("RAG_LAB_DATA_DIR", str(tmp_path / "data"))
    get_settings.cache_clear()
    for command in (("search", str(pets), "cats", "--mode", "bm25"), ("index", str(pets))):
        code, _, err = lab_cli(*command)  # search names the server too, not "no complete index … build it first"
        assert code == 2, command
        assert f"cannot reach the Qdrant server at http://127.0.0.1:{port}" in err and "QDRANT_URL" in err, err
        assert "build it first" not in err and err.count("→") <= 1
        assert "Traceback" not in err and len([l for l in err.splitlines() if l.startswith("error:")]) == 1


def test_make_demo_resume_path_still_resumes(pets, lab_settings, monkeypatch, tmp_path):
    """`make demo` re-runs its mode comparison with resume=True: same configuration, nothing refused,
    nothing answered twice."""
    from rag_lab.cli.demo_reports import _mode_comparison
    from rag_lab.evaluate import load_run

    llm = ScriptedLLM(script=quoting_answer)
    monkeypatch.setattr("rag_lab.models.llm.get_llm", lambda settings, **kw: llm)
    dataset = resolve_dataset(pets)
    out = _mode_comparison(dataset, lab_settings, tmp_path, limit=2)
    answered = len(llm.answer_prompts)
    assert answered == 8  # 2 questions × 4 modes
    again = _mode_comparison(dataset, lab_settings, tmp_path, limit=2)
    assert again == out and len(llm.answer_prompts) == answered
    assert list(load_run(out).modes["samples"]) == [2, 2, 2, 2]


def test_make_demo_starts_its_mode_comparison_over_when_the_configuration_changed(pets, lab_settings, monkeypatch,
                                                                                  tmp_path, capsys):
    """A second `make demo` after a change that alters the run's configuration (here the temperature)
    does not stop on "cannot resume": the old run is moved aside, the new one answered in full."""
    from rag_lab.cli.demo_reports import _mode_comparison
    from rag_lab.evaluate import load_run

    llm = ScriptedLLM(script=quoting_answer)
    monkeypatch.setattr("rag_lab.models.llm.get_llm", lambda settings, **kw: llm)
    dataset = resolve_dataset(pets)
    out = _mode_comparison(dataset, lab_settings, tmp_path, limit=2)
    answered = len(llm.answer_prompts)  # 0 when an earlier test left these answers in the answer cache
    changed = lab_settings.model_copy(update={"llm_temperature": lab_settings.llm_temperature + 0.5})
    again = _mode_comparison(dataset, changed, tmp_path, limit=2)
    assert again == out and len(llm.answer_prompts) == answered + 8  # 2 questions × 4 modes, answered again
    assert "cannot resume a run of another configuration (temperature" in capsys.readouterr().out
    assert [p.name.startswith(f"{out.name}.moved-") for p in tmp_path.iterdir() if p != out] == [True]
    assert load_run(out).manifest["settings"]["llm_temperature"] == changed.llm_temperature


def test_eval_leaves_unjudgeable_questions_out_of_document_metrics_and_counts_them(lab_settings, tmp_path):
    from rag_lab.cli.eval import render_eval_table

    ghost = {"id": "ghost", "question": "How long does a budgie live?", "reference_answer": "seven years",
             "source_file": "../../etc/passwd"}
    root = make_folder(tmp_path / "ghosts", qa=[QA[2], ghost])
    with pytest.warns(Warning, match="names no document"):
        run = _eval(root, lab_settings, tmp_path / "run")
    records = {r["id"]: r for r in run.records["bm25"]}
    assert records["ghost"]["unjudgeable"] is True and records["ghost"]["relevant"] == {}
    assert not {"id_context_precision", "id_context_recall", "mrr@10", "ndcg@10"} & set(records["ghost"]["scores"])
    assert records["ghost"]["scores"]["rouge_l"] is not None  # answer metrics still apply
    assert records["birds"]["scores"]["mrr@10"] == 1.0 and not records["birds"].get("unjudgeable")
    assert run.modes.set_index("mode").loc["bm25", "unjudgeable"] == 1
    row = next(line for line in render_eval_table(run).splitlines() if line.startswith("unjudgeable"))
    assert row.split() == ["unjudgeable", "1"]


def test_doc_key_of_a_flattened_node_is_the_nodes_own_key():
    """Qdrant payloads and bm25 corpus entries are flattened nodes whose top-level doc_id LlamaIndex
    sets to the ref_doc_id: the key must still be the path the chunk carries."""
    from llama_index.core import Document
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.utils import node_to_metadata_dict

    from rag_lab.retrieve.records import doc_key

    parent = Document(text="t", metadata={"filename": "cats.txt", "doc_id": "sub/cats.txt"})
    node = TextNode(text="t", metadata=dict(parent.metadata))
    node.relationships = {}
    from llama_index.core.schema import NodeRelationship

    node.relationships[NodeRelationship.SOURCE] = parent.as_related_node_info()
    flat = node_to_metadata_dict(node, remove_text=False, flat_metadata=False)
    assert flat["doc_id"] == parent.doc_id != "sub/cats.txt"  # what LlamaIndex writes at the top level
    assert doc_key(flat) == doc_key(node.metadata) == "sub/cats.txt"
    assert doc_key({"doc_id": "4983", "filename": "4983", "title": "x"}) == "4983"  # BEIR metadata


def test_eval_where_every_sample_failed_exits_1_with_the_shared_error(pets, lab_cli, monkeypatch, tmp_path):
    """An answer server nobody listens on: each sample records its error (the run is kept, resumable),
    and the command says it measured nothing and exits 1 (was: exit 0 under a table of NaNs). The real
    openai SDK against a closed port."""
    from tests.index.test_embed_unreachable import closed_port

    url = f"http://127.0.0.1:{closed_port()}/v1"
    for name, value in {"RAG_LAB_LLM_PROVIDER": "openai_compatible", "RAG_LAB_LLM_BASE_URL": url,
                        "RAG_LAB_LLM_MODEL": "some-model", "RAG_LAB_MAX_RETRIES": "0"}.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    code, out, err = lab_cli("eval", str(pets), "--modes", "bm25", "--limit", "2", "--out", str(tmp_path / "run"))
    assert code == 1, err
    assert "every one of the 2 samples failed, so nothing was measured" in err
    [shared] = err.split("nothing was measured:\n")[1].splitlines()  # one error, shared by both samples
    assert f"could not reach the API at {url}/chat/completions" in shared and "some-model" in shared
    assert len((tmp_path / "run" / "bm25" / "samples.jsonl").read_text().splitlines()) == 2  # kept for --resume
