"""A retrieval lever added in one file reaches every command: a copy of the package whose
``rag_lab/retrieve/configuration.py`` alone is edited — one :class:`RetrievalConfig` field and its
ablation axis with its kernel — then ``search``, ``ir``, ``ask``, ``eval``, ``ablate``, ``tune``, the
API and a ``--config`` file take the lever, and live retrieval equals the grid at every value.

The copy runs in a subprocess (its own index, built from this session's parse and embedding caches),
so nothing but that one file differs from the package under test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BUILD_CACHES, REPO, copy_sqlite_files

pytestmark = pytest.mark.slow  # a second interpreter, an index build and a tune run

FIELD = '''    promote: int = lever(0, "the fused result at this rank below the top moved to the top")

    def with_levers('''
KERNEL = '''def promoted(ranked, n, document_of, depth):
    """The promote lever's kernel: the result ``n`` places below the top moves to the top (0: unchanged)."""
    ranked = list(ranked)
    return [ranked[n], *ranked[:n], *ranked[n + 1:]] if 0 < n < len(ranked) else ranked


AXES = (*AXES, Axis("promote", "promote", ("promote",), "promote", (0,), "does promoting a lower result matter?",
                    "promotion", "promote", "promote", "ranks moved to the top", token_at_default=False,
                    kernel=promoted))
CUT = "top_k"'''

SCRIPT = r'''
import json, warnings
from pathlib import Path

from rag_lab import api
from rag_lab.cli.levers import answer_params
from rag_lab.cli.main import build_parser, main
from rag_lab.evaluate.ablation.grid import GridSpec, compute_grid
from rag_lab.evaluate.ablation.legs import retrieve_legs
from rag_lab.evaluate.ablation.runner import load_questions
from rag_lab.index import CorpusIndex
from rag_lab.retrieve.configuration import RetrievalConfig
from tests.answer.conftest import ScriptedLLM, by_task

warnings.simplefilter("ignore")
assert "promote" in RetrievalConfig.__dataclass_fields__, "the copy's configuration.py has the new field"
settings = api.load_settings()
api.index("texas_childcare", settings=settings)
ds = api.load_dataset("texas_childcare", settings)
queries, _, _ = load_questions(ds, limit=4)
index = CorpusIndex.open(ds, settings)

def texts(hits):  # what every record of a ranked chunk names (search --json, answers, eval contexts)
    return [(h.node.metadata["doc_id"], h.node.metadata.get("page"), h.score) for h in hits]

def named(records):
    return [(r["doc_id"], r["page"], r["score"]) for r in records]

# live retrieval (the API) equals the grid at every value of the new lever, in both fused modes
spec = GridSpec(modes=("fusion", "hybrid"), fusion_k=(60,), prefetch=(100,), top_k=(5,), promote=(0, 1, 2, 3))
questions, _ = retrieve_legs(index, queries, Path("legs"), spec.modes, spec.depth, progress=False,
                             prefetches=spec.prefetch)
grid = compute_grid(questions, spec)
moved = 0
for config in grid.configs:
    for qid, text in queries.items():
        live = api.search(ds, text, mode=config.mode, top_k=5, promote=config.value("promote"), settings=settings)
        assert [h.node.node_id for h in live] == list(grid.chunks[config.id][qid]), (config.id, qid)
        base = config.id.split("|promote=")[0]
        moved += grid.chunks[config.id][qid] != grid.chunks[base][qid]
assert moved, "the new lever moves some ranking"
question = next(iter(queries.values()))
promoted = texts(api.search(ds, question, mode="fusion", top_k=5, promote=2, settings=settings))

# search on the command line
assert main(["search", "texas_childcare", question, "--mode", "fusion", "--top-k", "5", "--promote", "2",
             "--json", "search.json"]) == 0
assert named(json.loads(Path("search.json").read_text())) == promoted

# ir: the lever is among the run's parameters
assert main(["ir", "texas_childcare", "--modes", "fusion", "--limit", "4", "--promote", "1", "--json", "ir.json"]) == 0
assert json.loads(Path("ir.json").read_text())["params"]["promote"] == 1

# ask and eval: the flag parses into the answering parameters; the API's answers read the promoted chunks
parser = build_parser()
assert answer_params(parser.parse_args(["ask", "texas_childcare", "q", "--promote", "2"]))["promote"] == 2
assert answer_params(parser.parse_args(["eval", "texas_childcare", "--promote", "2"]))["promote"] == 2
llm = ScriptedLLM(script=by_task("The answer [Doc 1]."))
answer = api.ask(ds, question, mode="fusion", rerank=False, top_k=5, top_n=5, promote=2, llm=llm, settings=settings)
assert [(c.doc_id, c.page, c.score) for c in answer.chunks] == promoted
run = api.evaluate(ds, ["fusion"], "evalrun", limit=1, rerank=False, top_k=5, top_n=5, promote=2, llm=llm,
                   metrics=["rouge_l"], settings=settings)
(record,) = run.records["fusion"]
assert named(record["contexts"]) == texts(api.search(ds, record["question"], mode="fusion", top_k=5,
                                                                   promote=2, settings=settings))

# ablate: the axis in the grid, and the spot check (live retrievers against the grid) agrees at every value
result = api.ablate(ds, "ablation", grid={"modes": ["fusion", "hybrid"], "fusion_k": [60], "prefetch": [100],
                                          "top_k": [5], "promote": [0, 2]}, limit=4, answer_configs="none",
                    settings=settings)
assert any("promote=2" in c for c in result.results["config"])
assert result.manifest["spot_check"]["equal"] and ("promote", "2") in {
    tuple(p) for c in result.manifest["spot_check"]["checks"] for p in c["axes"]}
assert parser.parse_args(["ablate", "texas_childcare", "--promote", "0,1"]).promote == "0,1"

# tune: the axis in its grid; the file it writes, and a file written by hand, carry the lever
assert main(["tune", "texas_childcare", "--modes", "fusion", "--fusion-k", "60", "--prefetch", "100",
             "--weights", "1:1", "--max-per-doc", "0", "--top-k", "5", "--promote", "0,2", "--out", "tune",
             "--config-out", "tuned.toml"]) == 0
assert "promote = " in Path("tuned.toml").read_text()
Path("mine.toml").write_text('[retrieval]\nmode = "fusion"\npromote = 2\ntop_k = 5\n')
assert texts(api.search(ds, question, config="mine.toml", settings=settings)) == promoted
assert main(["search", "texas_childcare", question, "--config", "mine.toml", "--json", "config.json"]) == 0
assert named(json.loads(Path("config.json").read_text())) == promoted
print("every command took the new lever")
'''


def test_a_field_added_to_the_configuration_reaches_every_command(lab_settings, texas_index, tmp_path):
    package = tmp_path / "src" / "rag_lab"
    shutil.copytree(REPO / "rag_lab", package, ignore=shutil.ignore_patterns("__pycache__"))
    configuration = package / "retrieve" / "configuration.py"
    text = configuration.read_text(encoding="utf-8")
    assert text.count("    def with_levers(") == 1 and text.count('\nCUT = "top_k"') == 1
    configuration.write_text(text.replace("    def with_levers(", FIELD, 1)
                             .replace('\nCUT = "top_k"', "\n" + KERNEL, 1), encoding="utf-8")
    changed = [p.relative_to(package) for p in package.rglob("*.py")
               if p.read_bytes() != (REPO / "rag_lab" / p.relative_to(package)).read_bytes()]
    assert changed == [Path("retrieve/configuration.py")]  # one file, nothing else

    data = tmp_path / "data"
    copy_sqlite_files(Path(lab_settings.cache_dir), data / Path(lab_settings.cache_dir).relative_to(
        lab_settings.data_dir), BUILD_CACHES)  # the index builds from this session's parses and embeddings
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_LAB_")}
    env.update(PYTHONPATH=f"{package.parent}{os.pathsep}{REPO}", RAG_LAB_DATA_DIR=str(data),
               RAG_LAB_DATASETS_DIR=str(lab_settings.datasets_dir), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=work, env=env, capture_output=True, text=True,
                          timeout=1500)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "every command took the new lever" in done.stdout
