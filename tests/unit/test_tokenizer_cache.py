"""LlamaIndex's tokenizer cache variable stays set for the process (its first get_tokenizer() call
deletes a variable it set itself; two threads doing so at once raised KeyError on a Ray actor)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def _run(code: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


PROBE = """
import json, os, sys, threading
sys.setswitchinterval(1e-6)  # switch threads between bytecodes: without the pin this raised KeyError here
import rag_lab
import llama_index.core
from llama_index.core.utils import get_tokenizer
pinned = os.environ.get("TIKTOKEN_CACHE_DIR")
errors = []
def first_call():
    try:
        get_tokenizer()
    except Exception as exc:
        errors.append(repr(exc))
for _ in range(50):  # the first call, many times over, from 8 threads at once
    llama_index.core.global_tokenizer = None
    threads = [threading.Thread(target=first_call) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
print(json.dumps({"pinned": pinned, "exists": bool(pinned) and os.path.isdir(pinned),
                  "after": os.environ.get("TIKTOKEN_CACHE_DIR"), "errors": errors,
                  "tokens": len(get_tokenizer()("$4,106 bi-weekly"))}))
"""


def test_importing_rag_lab_pins_llama_index_tiktoken_cache_and_first_calls_race_safely():
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    seen = _run(PROBE, env)
    assert seen["exists"] and seen["pinned"].endswith(os.path.join("_static", "tiktoken_cache"))
    assert seen["after"] == seen["pinned"]  # LlamaIndex did not delete it
    assert seen["errors"] == [] and seen["tokens"] > 0


def test_a_users_tiktoken_cache_wins(tmp_path):
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path)}
    seen = _run("import json, os, rag_lab; print(json.dumps({'dir': os.environ['TIKTOKEN_CACHE_DIR']}))", env)
    assert seen["dir"] == str(tmp_path)
