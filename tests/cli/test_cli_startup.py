"""`rag-lab --help` and argument errors must not import the heavy stack (LlamaIndex, torch,
Qdrant, bm25s): they return at once. Timing itself: benchmarks/cli_startup.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("llama_index", "torch", "qdrant_client", "bm25s", "transformers", "sentence_transformers", "ranx",
         "boto3", "pandas", "pydantic_settings")
PROBE = """
import json, sys
from rag_lab.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split('.')[0] for m in sys.modules} & set(json.loads(sys.stdin.read())))
print(json.dumps({"code": code, "heavy": heavy}))
"""


@pytest.mark.parametrize("argv", [["--help"], ["search", "--help"], ["search"], ["ask", "x", "y", "--mode", "nope"],
                                  ["ir", "scifact", "--limit", "many"], ["search", "d", "q", "--mdoe", "hybrid"],
                                  ["serch", "d", "q"], ["--version"]])
def test_help_and_argument_errors_import_nothing_heavy(argv):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], input=json.dumps(HEAVY), capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=120)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] in (0, 2), done.stderr
    assert result["heavy"] == [], f"{argv}: imported {result['heavy']}"


def test_a_misspelled_option_is_refused_by_its_command_with_the_closest_option(capsys):
    from rag_lab.cli import main

    with pytest.raises(SystemExit) as refused:
        main(["search", "texas_childcare", "a query", "--mdoe", "hybrid"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "usage: rag-lab search" in err  # the command's usage, not the top level's
    assert "unrecognized arguments: --mdoe hybrid (did you mean --mode?)" in err
    with pytest.raises(SystemExit):
        main(["ask", "texas_childcare", "a question", "--zzz"])
    err = capsys.readouterr().err
    assert "usage: rag-lab ask" in err and err.rstrip().endswith("unrecognized arguments: --zzz")  # nothing close: no guess


def test_a_misspelled_command_is_refused_with_the_closest_command(capsys):
    from rag_lab.cli import main

    with pytest.raises(SystemExit) as refused:
        main(["--debug", "serch", "texas_childcare", "a query"])
    assert refused.value.code == 2
    assert "unknown command 'serch' (did you mean search?)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # nothing close: argparse's own list of the commands
        main(["zzzz"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'zzzz'" in err and "did you mean" not in err


def test_version(capsys):
    from importlib.metadata import version

    from rag_lab.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"rag-lab {version('rag-lab')}"
