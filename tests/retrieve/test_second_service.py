"""A second service retriever is one file and one registry line: a copy of the package with
``tests/contracts/second_service/bedrock_kb.py`` (Amazon Bedrock Knowledge Bases' Retrieve API) added
as ``rag_lab/retrieve/bedrock_kb.py`` and one ``RetrieverEntry`` line in ``registry.py`` — nothing else
changed — passes the retriever contract suite and answers in ``eval``, its SDK (a real boto3 client)
answered at the HTTP layer (``tests/contracts/second_service/stub.py``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BUILD_CACHES, REPO, copy_sqlite_files

pytestmark = pytest.mark.slow  # other interpreters: a pytest run and an eval run

ENTRY = ('    RetrieverEntry("bedrock-kb", "rag_lab.retrieve.bedrock_kb:BedrockKBRetriever", "AWS Bedrock knowledge base", '
         'service="Bedrock KB"),\n')
EVAL = r'''
import json
from rag_lab import api
from rag_lab.retrieve.registry import answering_modes, needs_dataset
from tests.answer.conftest import ScriptedLLM, by_task
from tests.contracts.second_service.stub import FILES, stubbed_session

stubbed_session()
assert "bedrock-kb" in answering_modes() and not needs_dataset("bedrock-kb")
llm = ScriptedLLM(script=by_task("The parent share of cost is set by the board [Doc 1]."))
run = api.evaluate("texas_childcare", ["bedrock-kb"], "run", limit=2, llm=llm, metrics=["rouge_l"])
records = run.records["bedrock-kb"]
assert len(records) == 2 and all(r["error"] is None for r in records), records
assert all(r["contexts"] and {c["doc_id"] for c in r["contexts"]} <= set(FILES) for r in records)
assert all(r["rerank"] is None or "ranks internally" in json.dumps(r["rerank"]) for r in records)
manifest = json.loads(open("run/manifest.json").read())
assert manifest["config"]["modes"] == ["bedrock-kb"]
print("eval answered with the second service")
'''


def test_a_second_service_passes_the_contract_suite_and_runs_in_eval(lab_settings, texas_index, tmp_path):
    root = tmp_path / "src"
    package = root / "rag_lab"
    shutil.copytree(REPO / "rag_lab", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "tests", root / "tests", ignore=shutil.ignore_patterns("__pycache__", "*.json.old"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    (root / "datasets").symlink_to(REPO / "datasets")
    shutil.copy(REPO / "tests" / "contracts" / "second_service" / "bedrock_kb.py", package / "retrieve" / "bedrock_kb.py")
    registry = package / "retrieve" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    kendra = text.index('    RetrieverEntry("kendra"')
    after = text.index("\n)}", kendra) + 1  # the line that closes the table
    registry.write_text(text[:after] + ENTRY + text[after:], encoding="utf-8")
    added = [p.relative_to(package) for p in package.rglob("*.py") if not (REPO / "rag_lab" / p.relative_to(package)).exists()]
    changed = [p.relative_to(package) for p in package.rglob("*.py") if p.relative_to(package) not in added
               and p.read_bytes() != (REPO / "rag_lab" / p.relative_to(package)).read_bytes()]
    assert added == [Path("retrieve/bedrock_kb.py")] and changed == [Path("retrieve/registry.py")]
    assert len(registry.read_text().splitlines()) == len(text.splitlines()) + 1  # one line

    data = tmp_path / "data"  # the index builds from this session's parses and embeddings
    copy_sqlite_files(Path(lab_settings.cache_dir), data / "test-cache", BUILD_CACHES)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_LAB_") and k != "PYTHONPATH"}
    env.update(RAG_LAB_DATA_DIR=str(data), HF_HUB_OFFLINE="1", PYTHONPATH=str(root))
    contract = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-p",
         "tests.contracts.second_service.plugin", "-k", "bedrock", "tests/contracts"],
        cwd=root, env=env, capture_output=True, text=True, timeout=1200)
    assert contract.returncode == 0, contract.stdout[-4000:]
    assert " passed" in contract.stdout and " failed" not in contract.stdout
    passed = int(contract.stdout.strip().splitlines()[-1].split(" passed")[0].split()[-1])
    assert passed >= 20  # the mode and the agent's tool over it, every contract test

    work = tmp_path / "work"
    work.mkdir()
    (work / "datasets").symlink_to(REPO / "datasets")
    done = subprocess.run([sys.executable, "-c", EVAL], cwd=work, env=env, capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "eval answered with the second service" in done.stdout
