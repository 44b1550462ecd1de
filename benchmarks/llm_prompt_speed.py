"""Prompt reading and generation speed of the local 1.5B under two Python environments, side by side:
e.g. the prebuilt ``xllamacpp`` wheel against one compiled for this CPU.

    python benchmarks/llm_prompt_speed.py --python .venv/bin/python --python /tmp/native/bin/python --rounds 3

Each round runs one fresh process per interpreter, the order alternating, and each process reads the
same six ~400-token prompts (a distinct start each, so llama.cpp's prompt cache never helps) and writes
32 tokens after each. The ratio per round (tokens/s of the second over the first) is the result; the
first interpreter's tokens/s is the machine's reference figure. Both load the model exactly as
``rag_lab.models.llm.runtime`` does (two threads, passive waits, no warm-up).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Run by each interpreter: only xllamacpp is imported there, so an environment without rag_lab works too.
WORKER = r"""
import json, os, statistics, sys
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import xllamacpp
params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.n_ctx, params.n_parallel, params.warmup, params.offline, params.verbosity = 4096, 1, False, True, -1
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 2
server = xllamacpp.Server(params)
text = open(sys.argv[2], encoding="utf-8").read()
prompt_speed, generation_speed = [], []
for i in range(6):
    reply = server.handle_chat_completions({"messages": [{"role": "user", "content": f"{i} Summarise: {text[i * 1500:i * 1500 + 1400]}"}],
                                            "max_tokens": 32, "temperature": 0.0, "seed": 0})
    prompt_speed.append(reply["timings"]["prompt_per_second"])
    generation_speed.append(reply["timings"]["predicted_per_second"])
print(json.dumps({"system": xllamacpp.get_system_info().strip(), "prompt": statistics.median(prompt_speed),
                  "generation": statistics.median(generation_speed)}))
"""


def measure(python: str, model: str, text: str) -> dict:
    out = subprocess.run([python, "-c", WORKER, model, text], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", required=True, help="an interpreter (give two)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", default=None, help="the GGUF file (default: the catalogued 1.5B)")
    args = parser.parse_args()
    if len(args.python) != 2:
        parser.error("give --python twice: the reference interpreter, then the candidate")
    model = args.model
    if model is None:
        sys.path.insert(0, str(ROOT))
        from rag_lab.config import get_settings
        from rag_lab.models.llm.catalog import resolve_model_file

        model = str(resolve_model_file("qwen2.5-coder-1.5b", get_settings().models_dir)[0])
    text = str(ROOT / "docs" / "answering.md")
    ratios: dict[str, list[float]] = {"prompt": [], "generation": []}
    for round_ in range(args.rounds):
        order = [0, 1] if round_ % 2 == 0 else [1, 0]
        results = {i: measure(args.python[i], model, text) for i in order}
        for kind in ratios:
            ratios[kind].append(results[1][kind] / results[0][kind])
        print(f"round {round_ + 1}: " + "; ".join(
            f"{name} prompt {r['prompt']:.1f} tok/s, generation {r['generation']:.1f} tok/s"
            for name, r in (("reference", results[0]), ("candidate", results[1]))), flush=True)
    print(f"reference: {results[0]['system']}\ncandidate: {results[1]['system']}")
    for kind, values in ratios.items():
        print(f"{kind}: candidate / reference median {statistics.median(values):.2f}× "
              f"(rounds: {', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
