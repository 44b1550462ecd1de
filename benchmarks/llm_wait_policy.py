"""How llama.cpp's thread waits change the local judge's speed: passive (the runtime's setting) against
a bounded spin, side by side.

llama.cpp's CPU threads meet at a barrier after every operation. ``rag_lab.models.llm.runtime`` sets
OpenMP's waits passive (a busy machine made spinning threads 10× slower); on a quiet machine a short
spin may be faster. Each round runs one fresh process per setting (OpenMP reads its settings once, at
load), alternating which goes first, and each process asks the judge's verdict question (a premise and
a statement, one token answered: prompt processing) for the same pairs, then generates a few sentences.
The ratios are taken within a round, so the machine's drift between rounds cancels.

    python benchmarks/llm_wait_policy.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SETTINGS = {
    "passive": {"OMP_WAIT_POLICY": "PASSIVE"},
    "spin20k": {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "20000"},
}
ANSWERS = Path("datasets/texas_childcare_full/natural_answers/answers.jsonl")
PROMPTS = ("Write three sentences about child care subsidies in Texas.",
           "Explain what a bi-weekly payment schedule is, in four sentences.")


def verdict_pairs(n: int) -> list[tuple[str, str]]:
    """(premise, statement) pairs like the judge's: a context's opening and an answer's first sentence."""
    pairs = []
    for line in ANSWERS.read_text(encoding="utf-8").splitlines():
        answer = json.loads(line)
        if answer.get("contexts") and answer.get("answer"):
            pairs.append((answer["contexts"][0]["text"][:600], answer["answer"].split("\n")[0][:300]))
        if len(pairs) == n:
            break
    return pairs


def worker(pairs: int) -> dict[str, float]:
    """One process's measurements (run with the setting's environment)."""
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    from rag_lab.config import get_settings
    from rag_lab.evaluate.judge.factory import build_judge
    from rag_lab.evaluate.judge.probability import ask_verdict
    from rag_lab.evaluate.run.runner import judge_settings
    from rag_lab.models.llm.runtime import loaded_runtimes

    llm = build_judge(judge_settings(get_settings(), "local"))
    ask_verdict(llm, "warm", "up")
    runtime = loaded_runtimes()[0]
    tokens, started = 0, time.perf_counter()
    for premise, statement in verdict_pairs(pairs):
        ask_verdict(llm, premise, statement)
        tokens += int(runtime.last_timings.get("prompt_n", 0))
    prompt_seconds = time.perf_counter() - started
    generated, generating = 0, 0.0
    for prompt in PROMPTS:
        llm.chat([ChatMessage(role=MessageRole.USER, content=prompt)], max_tokens=80, temperature=0.0)
        generated += int(runtime.last_timings.get("predicted_n", 0))
        generating += float(runtime.last_timings.get("predicted_ms", 0.0)) / 1000
    return {"verdict_seconds": prompt_seconds, "prompt_tok_s": tokens / prompt_seconds,
            "generation_tok_s": generated / generating if generating else 0.0}


def run_one(setting: str, pairs: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")} | SETTINGS[setting]
    done = subprocess.run([sys.executable, __file__, "--worker", "--pairs", str(pairs)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=14, help="verdicts per process")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.pairs)))
        return 0
    names = list(SETTINGS)
    ratios: dict[str, list[float]] = {"verdicts": [], "generation": []}
    print(f"| round | setting | {args.pairs} verdicts (s) | prompt tok/s | generation tok/s |\n|---|---|---|---|---|")
    for round_ in range(1, args.rounds + 1):
        order = names if round_ % 2 else names[::-1]
        found = {name: run_one(name, args.pairs) for name in order}
        for name in names:
            m = found[name]
            print(f"| {round_} | {name} | {m['verdict_seconds']:.1f} | {m['prompt_tok_s']:.1f} | "
                  f"{m['generation_tok_s']:.1f} |", flush=True)
        base, other = found[names[0]], found[names[1]]
        ratios["verdicts"].append(base["verdict_seconds"] / other["verdict_seconds"])
        ratios["generation"].append(other["generation_tok_s"] / base["generation_tok_s"])
    for what, values in ratios.items():
        print(f"{names[1]} against {names[0]}, {what} speed: median {statistics.median(values):.2f}× "
              f"(rounds: {', '.join(f'{v:.2f}' for v in values)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
