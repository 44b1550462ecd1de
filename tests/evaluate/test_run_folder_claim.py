"""A run folder never loses a run: `eval`, `ablate` and `tune` (and the Python API) refuse an --out
holding another run, naming both, unless --resume (same configuration) or --force (moves it aside)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_lab.evaluate.store.claim import RunFolderTakenError
from rag_lab.evaluate.store.run_lock import LOCK_FILE
from tests.answer.conftest import ScriptedLLM
from tests.builders import write_folder_dataset
from tests.cli.test_cli import cli  # noqa: F401  (the in-process CLI fixture)
from tests.evaluate.conftest import quoting_answer
from tests.evaluate.test_eval_cli import scripted_generator  # noqa: F401  (the CLI's generator, scripted)


@pytest.fixture(scope="module")
def mycorpus(tmp_path_factory, lab_settings):
    """A second dataset, ``mycorpus``: two documents with a dollar amount each, two questions; indexed."""
    from rag_lab.datasets import resolve_dataset
    from rag_lab.index import build_index

    docs = {"fees.txt": "Registration costs $25 per child.\n", "meals.txt": "Lunch costs $4 a day.\n"}
    qa = [{"id": "fees", "question": "How much is registration?", "reference_answer": "Registration costs $25.",
           "source_file": "fees.txt"},
          {"id": "meals", "question": "How much is lunch?", "reference_answer": "Lunch costs $4 a day.",
           "source_file": "meals.txt"}]
    root = write_folder_dataset(tmp_path_factory.mktemp("corpora") / "mycorpus", docs, qa)
    build_index(resolve_dataset(root), lab_settings, progress=False)
    return str(root)


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (but the lock) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != LOCK_FILE}


def moved_folders(out: Path) -> list[Path]:
    return sorted(out.parent.glob(f"{out.name}.moved-*"))


def test_eval_of_another_dataset_is_refused_naming_both_and_force_moves_the_old_run_aside(
        cli, scripted_generator, mycorpus, tmp_path):  # noqa: F811
    out = tmp_path / "runs" / "tour"
    code, _, _ = cli("eval", "texas_childcare", "--modes", "bm25,hybrid", "--limit", "2", "--out", str(out))
    assert code == 0
    before = files_of(out)
    assert len(before["bm25/samples.jsonl"].splitlines()) == 2

    code, stdout, err = cli("eval", mycorpus, "--modes", "bm25", "--limit", "1", "--out", str(out))
    assert code == 2 and stdout == ""
    message = err.strip().splitlines()
    assert message[0].startswith(f"error: {out} holds an eval run of texas_childcare (modes bm25,hybrid; 2 questions)")
    assert "this is an eval run of mycorpus (modes bm25; 1 question): another dataset" in message[0]
    assert "--force" in message[1] and ".moved-" in message[1]
    assert files_of(out) == before and not moved_folders(out)  # nothing written, nothing moved
    # with --resume (which refuses --force) the hint says to drop it before --force can move the run
    code, _, err = cli("eval", mycorpus, "--modes", "bm25", "--limit", "1", "--out", str(out), "--resume")
    assert code == 2 and "another dataset" in err
    assert "drop --resume (resume=False) and add --force (force=True)" in err
    code, stdout, _ = cli("eval", mycorpus, "--modes", "bm25", "--limit", "1", "--out", str(out), "--resume", "--dry-run")
    assert code == 2 and "drop --resume" in stdout
    assert files_of(out) == before and not moved_folders(out)

    code, stdout, _ = cli("eval", mycorpus, "--modes", "bm25", "--limit", "1", "--out", str(out), "--dry-run")
    assert code == 2  # the estimate is printed, and a script still sees that the run would be refused
    assert f"run folder: {out} holds an eval run of texas_childcare" in stdout
    assert "another dataset" in stdout and "The run would be refused" in stdout
    code, stdout, _ = cli("eval", mycorpus, "--modes", "bm25", "--limit", "1", "--out", str(out), "--dry-run",
                          "--force")
    assert code == 0 and f"--force: the old run would be moved to {out}.moved-" in stdout
    assert files_of(out) == before and not moved_folders(out)  # a dry run changes nothing

    code, _, err = cli("eval", mycorpus, "--modes", "bm25", "--limit", "1", "--out", str(out), "--force")
    assert code == 0
    [aside] = moved_folders(out)
    assert files_of(aside) == before  # every file of the old run, byte for byte
    assert f"moved an eval run of texas_childcare" in err and str(aside) in err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dataset"]["name"] == "mycorpus" and manifest["config"]["modes"] == ["bm25"]
    assert not (out / "hybrid").exists()  # the old run's other mode went along with it

    # `ir --out` writes a run folder too: an eval run there is not overwritten by it
    now = files_of(out)
    code, _, err = cli("ir", "texas_childcare", "--modes", "bm25", "--limit", "2", "--out", str(out))
    assert code == 2 and "holds an eval run of mycorpus" in err and "this is an IR run of texas_childcare" in err
    assert files_of(out) == now

    # report writes with --out, as every command does; -o stays its short form
    for flag, page in (("--out", tmp_path / "long.html"), ("-o", tmp_path / "short.html")):
        code, stdout, err = cli("report", str(aside), flag, str(page))
        assert code == 0, err
        assert stdout.strip() == f"wrote {page}" and "texas_childcare" in page.read_text(encoding="utf-8")


def test_the_same_dataset_starts_over_only_as_the_same_run_and_resume_adds_to_it(
        cli, scripted_generator, tmp_path):  # noqa: F811
    out = tmp_path / "runs" / "same"
    base = ("eval", "texas_childcare", "--modes", "bm25", "--limit", "1", "--out", str(out))
    assert cli(*base)[0] == 0
    assert cli(*base)[0] == 0  # the very same run again: allowed (it starts over)

    # more modes and questions without --resume would drop the old samples: refused, --resume adds them
    code, _, err = cli("eval", "texas_childcare", "--modes", "bm25,hybrid", "--limit", "2", "--out", str(out))
    assert code == 2
    assert "another configuration (modes: ['bm25'] → ['bm25', 'hybrid']; --limit: 1 → 2)" in err
    code, _, _ = cli("eval", "texas_childcare", "--modes", "bm25,hybrid", "--limit", "2", "--out", str(out),
                     "--resume")
    assert code == 0
    assert len((out / "bm25" / "samples.jsonl").read_text().splitlines()) == 2
    assert json.loads((out / "manifest.json").read_text())["config"]["modes"] == ["bm25", "hybrid"]
    code, _, err = cli("eval", "texas_childcare", "--modes", "bm25,hybrid", "--limit", "2", "--out", str(out),
                       "--resume")  # nothing left: said, not silent
    assert code == 0 and f"--resume: every sample in {out} is finished, nothing was run" in err

    # another configuration: refused with or without --resume, each naming what differs
    before = files_of(out)
    code, _, err = cli("eval", "texas_childcare", "--modes", "bm25", "--limit", "2", "--top-n", "3", "--out", str(out))
    assert code == 2 and "top-n: default (7) → 3" in err and "holds an eval run of texas_childcare" in err
    code, _, err = cli("eval", "texas_childcare", "--modes", "bm25", "--limit", "2", "--top-n", "3", "--out", str(out),
                       "--resume")
    assert code == 2 and "cannot resume a run of another configuration" in err
    code, _, err = cli("eval", "texas_childcare", "--modes", "bm25", "--out", str(out), "--resume", "--force")
    assert code == 2 and "not both" in err
    assert files_of(out) == before


def test_the_api_refuses_another_run_and_moves_it_aside_with_force(lab_settings, texas_index, mycorpus, tmp_path):
    from rag_lab import api

    llm = ScriptedLLM(script=quoting_answer)
    out = tmp_path / "runs" / "tour-py"
    api.evaluate("texas_childcare", ["bm25"], out, settings=lab_settings, limit=1, rerank=False, llm=llm)
    before = files_of(out)
    with pytest.raises(RunFolderTakenError, match="holds an eval run of texas_childcare .*an eval run of mycorpus"):
        api.evaluate(mycorpus, ["bm25"], out, settings=lab_settings, limit=1, rerank=False, llm=llm)
    assert files_of(out) == before
    with pytest.warns(UserWarning, match="moved an eval run of texas_childcare"):
        run = api.evaluate(mycorpus, ["bm25"], out, settings=lab_settings, limit=1, rerank=False, llm=llm, force=True)
    assert run.manifest["dataset"]["name"] == "mycorpus"
    [aside] = moved_folders(out)
    assert files_of(aside) == before


def test_ablate_refuses_another_dataset_and_another_grid(lab_settings, texas_index, mycorpus, tmp_path):
    from rag_lab import api

    out = tmp_path / "runs" / "grid"
    grid = {"modes": ["fusion"], "fusion_k": [60], "prefetch": [10], "top_k": [3, 5]}
    api.ablate("texas_childcare", out, settings=lab_settings, limit=4, answer_configs="none", **grid)
    before = files_of(out)
    with pytest.raises(RunFolderTakenError, match="an ablation run of texas_childcare .*: another dataset"):
        api.ablate(mycorpus, out, settings=lab_settings, answer_configs="none", **grid)
    with pytest.raises(RunFolderTakenError, match=r"another configuration \(grid top_k: \[3, 5\] → \[3\]\)"):
        api.ablate("texas_childcare", out, settings=lab_settings, limit=4, answer_configs="none",
                   **{**grid, "top_k": [3]})
    assert files_of(out) == before
    again = api.ablate("texas_childcare", out, settings=lab_settings, limit=4, answer_configs="none", **grid)
    assert again.manifest["n_configs"] == 2  # the same ablation again: allowed, from its leg cache
    with pytest.warns(UserWarning, match="moved an ablation run of texas_childcare"):
        api.ablate(mycorpus, out, settings=lab_settings, answer_configs="none", force=True, **grid)
    [aside] = moved_folders(out)
    assert json.loads((aside / "manifest.json").read_text())["dataset"] == "texas_childcare"
    assert json.loads((out / "manifest.json").read_text())["dataset"] == "mycorpus"


def test_a_moved_run_keeps_every_file_and_the_writer_keeps_its_lock(tmp_path):
    from rag_lab.evaluate.store.claim import RunOwner, claim_run_folder, folder_note
    from rag_lab.evaluate.store.run_lock import run_lock

    out = tmp_path / "run"
    (out / "bm25").mkdir(parents=True)
    (out / "bm25" / "samples.jsonl").write_text('{"id": "q1"}\n')
    (out / "manifest.json").write_text(json.dumps({"dataset": {"name": "a", "hash": "1"}, "config": {"modes": ["bm25"]}}))
    before = files_of(out)
    other = RunOwner("eval", "b", "2", "modes bm25")
    assert claim_run_folder(out, RunOwner("eval", "a", "1")) is None  # the same run: nothing to do
    assert "another version of the dataset" in folder_note(out, RunOwner("eval", "a", "9"))
    with run_lock(out):
        with pytest.warns(UserWarning):
            first = claim_run_folder(out, other, force=True)
        assert (out / LOCK_FILE).exists() and files_of(out) == {}  # the lock held stays with the folder
    (out / "manifest.json").write_text(json.dumps({"dataset": {"name": "a", "hash": "1"}}))
    with pytest.warns(UserWarning):
        second = claim_run_folder(out, other, force=True)  # within the same second: a name of its own
    assert files_of(first) == before and first != second and second.exists()


def test_tune_refuses_another_dataset_or_metric_and_repeats_its_own_run(lab_settings, texas_index, mycorpus, tmp_path):
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.ablation.grid import GridSpec
    from rag_lab.evaluate.tune import tune

    texas = resolve_dataset("texas_childcare", lab_settings.datasets_dir)
    spec = GridSpec(modes=("fusion",), fusion_k=(10, 60), prefetch=(100,), top_k=(5,))
    out = tmp_path / "runs" / "tune"
    first = tune(texas, lab_settings, out, spec, progress=False)
    before = files_of(out)
    with pytest.raises(RunFolderTakenError, match="holds a tune run of texas_childcare .*: another dataset"):
        tune(resolve_dataset(mycorpus), lab_settings, out, spec, progress=False)
    with pytest.raises(RunFolderTakenError, match=r"another configuration \(--metric: 'chunk_hit@5' → 'ndcg@10'; "
                                                  r"grid top_k: \[5\] → \[10\]\)"):
        tune(texas, lab_settings, out, spec, metric="ndcg@10", progress=False)
    assert files_of(out) == before
    again = tune(texas, lab_settings, out, spec, progress=False)  # the same tune: allowed, the same split and pick
    assert again.selection.chosen.config == first.selection.chosen.config
    assert (out / "dev_split.txt").read_bytes() == before["dev_split.txt"]
    with pytest.warns(UserWarning, match="moved a tune run of texas_childcare"):
        tune(texas, lab_settings, out, spec, metric="ndcg@10", progress=False, force=True)
    [aside] = moved_folders(out)
    assert json.loads((aside / "tune.json").read_text())["metric"] == "chunk_hit@5"
    assert json.loads((out / "tune.json").read_text())["metric"] == "ndcg@10"
