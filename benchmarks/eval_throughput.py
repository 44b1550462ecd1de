"""Evaluation throughput against a remote provider: samples/s at --concurrency 1, 4 and 16.

    PYTHONPATH=. python benchmarks/eval_throughput.py [--dataset texas_childcare_full] [--samples 64]
        [--modes bm25,dense] [--levels 1,4,16] [--json FILE] [--no-latency]

Starts an OpenAI-compatible fake server on 127.0.0.1 (latency 400 ms ± 100 ms, 5 % HTTP 429 with
``Retry-After: 1``, 1 % HTTP 500; it stops by itself after --server-seconds), points the generator
(``openai_compatible``) and the judge (``--judge openai_compatible:…``, faithfulness: two judge
calls per sample) at it, and runs ``run_evaluation`` on the same samples in each mode at each
concurrency, each level with fresh model names so that no answer or score comes from the cache.
Prints samples/s per level, the speedup over concurrency 1, lost and duplicated samples, errors,
and where the time went (retrieval, generation and scoring seconds summed over samples, server
requests, 429s, 500s, retries, and the CPU seconds this process used per sample: at concurrency N
the rate cannot pass cores / CPU-seconds-per-sample). ``--no-latency`` is the machine's own baseline:
the same run with an instant server that never fails (the CPU part of a sample: retrieval, prompt,
scoring). Beside the absolute times it records the load average and a machine reference (MiniLM
chunks/s on 64 chunk-sized texts), as the machine is usually shared.

An untimed warm-up sample runs first (imports, RAGAS metric build, the one numba compile of ranx).

Needs the dataset's index (``rag-lab index texas_childcare_full``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

from rag_lab.config import load_settings
from rag_lab.evaluate import run_evaluation
from rag_lab.evaluate.runner import questions
from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.store import read_samples
from tests.evaluate.test_judged_metrics import judge_or_quote
from tests.models.fake_openai_server import FakeOpenAI

METRICS = ["faithfulness"]  # the judged part; IR scores (MRR, nDCG) are always computed


def start_server(args) -> tuple[FakeOpenAI, dict[str, int]]:
    rng = random.Random(args.seed)
    lock = threading.Lock()
    faults = {"429": 0, "500": 0}

    def fault(seen):
        if args.no_latency:
            return None
        with lock:
            draw = rng.random()
        if draw < args.p429:
            faults["429"] += 1
            return 429, {"Retry-After": "1"}
        if draw < args.p429 + args.p500:
            faults["500"] += 1
            return 500, {}
        return None

    def latency() -> float:
        if args.no_latency:
            return 0.0
        with lock:
            return max(0.0, rng.uniform(args.latency - args.jitter, args.latency + args.jitter))

    server = FakeOpenAI(reply=judge_or_quote, latency=latency, fault=fault)
    stopper = threading.Timer(args.server_seconds, server.close)  # bounded in time: stops by itself
    stopper.daemon = True
    stopper.start()
    return server, faults


def minilm_chunks_per_s(settings, n: int = 64, words: int = 500) -> float:
    """The machine reference: MiniLM embeddings of ``n`` chunk-sized texts per second."""
    from rag_lab.models import get_embed_model

    rng = random.Random(0)
    vocabulary = [f"w{i}" for i in range(2000)] + ["child", "care", "income", "family", "board", "$1,234", "2026"]
    texts = [" ".join(rng.choice(vocabulary) for _ in range(words)) for _ in range(n)]
    model = get_embed_model(settings)
    model.get_text_embedding_batch(texts[:4])  # loaded and warm
    started = time.perf_counter()
    model.get_text_embedding_batch(texts)
    return n / (time.perf_counter() - started)


def count(out: Path, modes: list[str], expected: set[str]) -> dict[str, float]:
    lost = duplicated = errors = nan = 0
    stages = {"retrieve": 0.0, "generate": 0.0, "score": 0.0}
    for mode in modes:
        lines = read_samples(out / mode / "samples.jsonl")
        ids = [r["id"] for r in lines]
        lost += len(expected - set(ids))
        duplicated += len(ids) - len(set(ids))
        errors += sum(1 for r in lines if r.get("error"))
        nan += sum(1 for r in lines if (r.get("scores") or {}).get("faithfulness") is None)
        for r in lines:
            for stage in stages:
                stages[stage] += float((r.get("latency") or {}).get(stage, 0.0))
    return {"lost": lost, "duplicated": duplicated, "errors": errors, "faithfulness_nan": nan, **stages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare_full")
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--modes", default="bm25,dense")
    parser.add_argument("--levels", default="1,4,16")
    parser.add_argument("--latency", type=float, default=0.4)
    parser.add_argument("--jitter", type=float, default=0.1)
    parser.add_argument("--p429", type=float, default=0.05)
    parser.add_argument("--p500", type=float, default=0.01)
    parser.add_argument("--no-latency", action="store_true", help="instant, faultless server: the CPU baseline")
    parser.add_argument("--server-seconds", type=float, default=3600.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    levels = [int(n) for n in args.levels.split(",")]

    base = load_settings()
    dataset = resolve_dataset(args.dataset, base.datasets_dir)
    expected = {p.id for p, _ in questions(dataset, args.samples)}
    reference = {"load_avg_1_5_15": os.getloadavg(), "minilm_chunks_per_s": round(minilm_chunks_per_s(base), 1)}
    print(f"machine: load average {' '.join(f'{x:.2f}' for x in reference['load_avg_1_5_15'])}, MiniLM "
          f"{reference['minilm_chunks_per_s']} chunks/s, {os.cpu_count()} cores", flush=True)
    server, faults = start_server(args)
    nonce = f"{time.time():.0f}"
    results: dict[int, dict] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # warm-up, not timed: imports, RAGAS metric build, numba compile of ranx (≈ 100 s on a loaded machine)
            warm = base.model_copy(update={"llm_provider": "openai_compatible", "llm_base_url": server.url,
                                           "llm_model": f"bench-warm-{nonce}", "judge_base_url": server.url})
            run_evaluation(dataset, warm, modes, Path(tmp) / "warm", limit=1, judge=f"openai_compatible:bench-warm-{nonce}",
                           rerank=False, progress=False, metrics=METRICS, concurrency=1)
            for level in levels:
                # fresh model names per level: every answer and judge score is really requested
                settings = base.model_copy(update={
                    "llm_provider": "openai_compatible", "llm_base_url": server.url,
                    "llm_model": f"bench-gen-{nonce}-c{level}", "judge_base_url": server.url})
                before, faults_before = len(server.requests), dict(faults)
                started, cpu_started = time.perf_counter(), time.process_time()
                out = Path(tmp) / f"c{level}"
                run_evaluation(dataset, settings, modes, out, limit=args.samples, judge=f"openai_compatible:bench-judge-"
                               f"{nonce}-c{level}", rerank=False, progress=False, metrics=METRICS, concurrency=level)
                seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
                done = count(out, modes, expected)
                requests = server.requests[before:]
                results[level] = {"seconds": seconds, "samples_per_s": len(expected) * len(modes) / seconds,
                                  "requests": len(requests), "retries": sum(1 for r in requests if r.retry_count),
                                  "http_429": faults["429"] - faults_before["429"],
                                  "http_500": faults["500"] - faults_before["500"], "cpu_s": cpu,
                                  "cpu_s_per_sample": cpu / (len(expected) * len(modes)),
                                  "load_avg_1": os.getloadavg()[0], **done}
                print(f"concurrency {level}: {results[level]['samples_per_s']:.2f} samples/s ({seconds:.1f} s)",
                      flush=True)
    finally:
        server.close()

    first = results[levels[0]]["samples_per_s"]
    print(f"\n{args.dataset}: {len(expected)} samples × {len(modes)} modes ({', '.join(modes)}), judge metric "
          f"faithfulness; server latency {'0' if args.no_latency else f'{args.latency:g} ± {args.jitter:g}'} s, "
          f"{0 if args.no_latency else args.p429:.0%} HTTP 429 (Retry-After 1), "
          f"{0 if args.no_latency else args.p500:.0%} HTTP 500")
    header = ("conc", "samples/s", "speedup", "wall s", "lost", "dup", "errors", "NaN", "requests", "429", "500",
              "retries", "retrieve s", "generate s", "score s", "cpu s", "cpu/sample", "load")
    print(" ".join(f"{h:>10}" for h in header))
    for level, r in results.items():
        row = (level, f"{r['samples_per_s']:.2f}", f"{r['samples_per_s'] / first:.1f}×", f"{r['seconds']:.1f}",
               r["lost"], r["duplicated"], r["errors"], r["faithfulness_nan"], r["requests"], r["http_429"],
               r["http_500"], r["retries"], f"{r['retrieve']:.1f}", f"{r['generate']:.1f}", f"{r['score']:.1f}",
               f"{r['cpu_s']:.1f}", f"{r['cpu_s_per_sample']:.3f}", f"{r['load_avg_1']:.1f}")
        print(" ".join(f"{c!s:>10}" for c in row))
    print("retrieve/generate/score s: summed over samples (they overlap when samples run at once); generate includes "
          "the SDK's retry waits (Retry-After, backoff); cpu s: this process's CPU time (all threads, the fake "
          "server's included); load: 1-minute load average at the end of the level")
    last = results[levels[-1]]
    print(f"CPU ceiling: {os.cpu_count()} cores / {last['cpu_s_per_sample']:.3f} CPU-s per sample = "
          f"{os.cpu_count() / last['cpu_s_per_sample']:.1f} samples/s at most on an idle machine")
    if args.json:
        last = levels[-1]
        args.json.write_text(json.dumps({
            "samples_per_s": {str(k): round(v["samples_per_s"], 3) for k, v in results.items()},
            f"speedup_{last}": round(results[last]["samples_per_s"] / first, 2),
            "lost": sum(r["lost"] for r in results.values()),
            "duplicated": sum(r["duplicated"] for r in results.values()),
            "detail": {str(k): v for k, v in results.items()}, "machine": reference,
            "command": " ".join(sys.argv)}, indent=2))


if __name__ == "__main__":
    main()
