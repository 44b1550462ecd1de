"""Evaluation throughput against a remote provider, as a CLI user gets it: samples/s at --concurrency 1, 4, 16.

    PYTHONPATH=. python benchmarks/eval_throughput.py [--dataset texas_childcare_full] [--samples 48]
        [--modes bm25] [--levels 1,4,16] [--trials 3] [--metrics M1,M2] [--json FILE] [--no-latency]

Measures what `rag-lab eval --judge openai_compatible:… --concurrency N` does: the default judged
metrics (all five, ≈ 16 requests a sample) unless --metrics names others, plus the offline ones. The
fake OpenAI-compatible server (latency 0.5 s ± 0.1 s, 5 % HTTP 429 with ``Retry-After: 1``, 1 %
HTTP 500) runs in a process of its own, so it takes no CPU or GIL from the client being measured.
Its latencies and faults are drawn from a hash of (seed, prompt, attempt, occurrence), not from one
stream: every level meets the same faults on the same requests. The levels are interleaved over
--trials trials (the order rotates each trial, so a machine that gets busier part-way does not bias
one level), each run with fresh model names so that no answer or score comes from the cache.

Prints per level the median samples/s and its range over the trials, the speedup over the first
level (median of the per-trial ratios, and their range), lost and duplicated samples, NaN judged
scores, and how busy the server was (requests in flight on average: busy seconds / wall seconds;
at concurrency N a client that never serialises keeps ≈ N in flight). ``--no-latency`` is the
machine's own baseline (an instant server that never fails: the CPU part of a sample).

An untimed warm-up sample runs first (imports, RAGAS metric build, the numba compile of ranx).
Needs the dataset's index (``rag-lab index texas_childcare_full``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

DEFAULT_JUDGED = None  # None: every judged metric, as `rag-lab eval --judge` without --metrics


def _draw(seed: int, *parts: object) -> float:
    """A uniform number in [0, 1) from its inputs alone: the same request draws the same at every level."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def serve(conn, options: dict) -> None:
    """The fake server's process: start it, send its URL, then answer "stats" until "stop"."""
    from tests.evaluate.test_judged_metrics import judge_or_quote
    from tests.models.fake_openai_server import FakeOpenAI

    lock = threading.Lock()
    seen_count: dict[tuple[str, int], int] = {}
    stats = {"requests": 0, "retries": 0, "http_429": 0, "http_500": 0, "busy_s": 0.0}
    local = threading.local()

    def key(seen) -> tuple:
        with lock:
            n = seen_count.get((seen.prompt, seen.retry_count), 0)
            seen_count[(seen.prompt, seen.retry_count)] = n + 1
        return seen.prompt, seen.retry_count, n

    class TimedServer(FakeOpenAI):
        def _handle(self, handler, body) -> None:
            started = time.monotonic()
            try:
                super()._handle(handler, body)
            finally:
                with lock:
                    stats["busy_s"] += time.monotonic() - started

    def latency() -> float:  # called first for each request: draws its latency and remembers its key
        return getattr(local, "latency", 0.0)

    def fault(seen):
        with lock:
            stats["requests"] += 1
            stats["retries"] += seen.retry_count > 0
        if options["no_latency"]:
            return None
        draw = _draw(options["seed"], "fault", *local.key)
        if draw < options["p429"]:
            with lock:
                stats["http_429"] += 1
            return 429, {"Retry-After": "1"}
        if draw < options["p429"] + options["p500"]:
            with lock:
                stats["http_500"] += 1
            return 500, {}
        return None

    server = TimedServer(reply=judge_or_quote, latency=latency, fault=fault)
    original = server._handle

    def handle(handler, body) -> None:  # the request's key (prompt, attempt, occurrence) decides its draws
        messages = body.get("messages") or [{}]
        content = messages[-1].get("content", "")
        prompt = content if isinstance(content, str) else content[0].get("text", "") if content else ""
        local.key = key(type("S", (), {"prompt": prompt, "retry_count":
                                       int(handler.headers.get("x-stainless-retry-count", 0))})())
        local.latency = 0.0 if options["no_latency"] else max(0.0, options["latency"] + options["jitter"] * (
            2 * _draw(options["seed"], "latency", *local.key) - 1))
        original(handler, body)

    server._handle = handle
    conn.send(server.url)
    while True:
        message = conn.recv()
        if message == "stats":
            with lock:
                conn.send(dict(stats))
        elif message == "reset":  # a new level: occurrences count from 0 again (same draws per level)
            with lock:
                seen_count.clear()
                stats.update(requests=0, retries=0, http_429=0, http_500=0, busy_s=0.0)
            conn.send("ok")
        else:
            server.close()
            return


class ServerProcess:
    def __init__(self, args) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        options = {k: getattr(args, k) for k in ("seed", "latency", "jitter", "p429", "p500", "no_latency")}
        self.process = ctx.Process(target=serve, args=(child, options), daemon=True)
        self.process.start()
        self.url = self.conn.recv()

    def ask(self, message: str):
        self.conn.send(message)
        return self.conn.recv()

    def close(self) -> None:
        try:
            self.conn.send("stop")
        except (BrokenPipeError, OSError):
            pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.terminate()


def count(out: Path, modes: list[str], expected: set[str], judged: list[str]) -> dict[str, float]:
    from rag_lab.evaluate.store.run_folder import read_samples

    lost = duplicated = errors = nan = 0
    for mode in modes:
        lines = read_samples(out / mode / "samples.jsonl")
        ids = [r["id"] for r in lines]
        lost += len(expected - set(ids))
        duplicated += len(ids) - len(set(ids))
        errors += sum(1 for r in lines if r.get("error"))
        nan += sum(1 for r in lines for m in judged if m in (r.get("scores") or {}) and r["scores"][m] is None)
    return {"lost": lost, "duplicated": duplicated, "errors": errors, "judged_nan": nan}


def rotated(levels: list[int], trial: int) -> list[int]:
    shift = trial % len(levels)
    return levels[shift:] + levels[:shift]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare_full")
    parser.add_argument("--samples", type=int, default=48)
    parser.add_argument("--modes", default="bm25")
    parser.add_argument("--levels", default="1,4,16")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--metrics", default=None,
                        help="as `eval --metrics` (default: every metric, the five judged ones included)")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--jitter", type=float, default=0.1)
    parser.add_argument("--p429", type=float, default=0.05)
    parser.add_argument("--p500", type=float, default=0.01)
    parser.add_argument("--no-latency", action="store_true", help="instant, faultless server: the CPU baseline")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    levels = [int(n) for n in args.levels.split(",")]
    metrics = [m for m in args.metrics.split(",") if m] if args.metrics else DEFAULT_JUDGED

    from rag_lab.config import load_settings
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate import run_evaluation
    from rag_lab.evaluate.metrics import all_specs
    from rag_lab.evaluate.run.runner import questions

    judged = [s.name for s in all_specs() if s.judged and (metrics is None or s.name in metrics)]
    base = load_settings()
    dataset = resolve_dataset(args.dataset, base.datasets_dir)
    expected = {p.id for p, _ in questions(dataset, args.samples)}
    n_samples = len(expected) * len(modes)
    print(f"machine: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores; "
          f"judged metrics: {', '.join(judged) or 'none'}", flush=True)
    server = ServerProcess(args)
    nonce = f"{time.time():.0f}"
    runs: dict[int, list[dict]] = {level: [] for level in levels}

    def settings_for(name: str):
        return base.model_copy(update={"llm_provider": "openai_compatible", "llm_base_url": server.url,
                                       "llm_model": f"bench-gen-{nonce}-{name}", "judge_base_url": server.url})

    try:
        with tempfile.TemporaryDirectory() as tmp:
            run_evaluation(dataset, settings_for("warm"), modes, Path(tmp) / "warm", limit=1, rerank=False,
                           judge=f"openai_compatible:bench-judge-{nonce}-warm", progress=False, metrics=metrics,
                           concurrency=1)
            for trial in range(args.trials):
                for level in rotated(levels, trial):
                    name = f"t{trial}-c{level}"
                    server.ask("reset")
                    out = Path(tmp) / name
                    started, cpu_started = time.perf_counter(), time.process_time()
                    run_evaluation(dataset, settings_for(name), modes, out, limit=args.samples, rerank=False,
                                   judge=f"openai_compatible:bench-judge-{nonce}-{name}", progress=False,
                                   metrics=metrics, concurrency=level)
                    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
                    stats = server.ask("stats")
                    result = {"trial": trial, "seconds": seconds, "samples_per_s": n_samples / seconds,
                              "in_flight_avg": stats["busy_s"] / seconds, "cpu_s_per_sample": cpu / n_samples,
                              "load_avg_1": os.getloadavg()[0], **stats, **count(out, modes, expected, judged)}
                    runs[level].append(result)
                    print(f"trial {trial + 1}/{args.trials}, concurrency {level}: {result['samples_per_s']:.3f} "
                          f"samples/s ({seconds:.1f} s, {result['in_flight_avg']:.1f} requests in flight on "
                          f"average, {stats['requests']} requests)", flush=True)
    finally:
        server.close()

    first = levels[0]
    speedups = {level: [r["samples_per_s"] / f["samples_per_s"] for r, f in zip(runs[level], runs[first])]
                for level in levels}
    print(f"\n{args.dataset}: {len(expected)} samples × {len(modes)} mode(s) ({', '.join(modes)}), "
          f"{len(judged)} judged metric(s); server latency "
          f"{'0' if args.no_latency else f'{args.latency:g} ± {args.jitter:g}'} s, "
          f"{0 if args.no_latency else args.p429:.0%} HTTP 429 (Retry-After 1), "
          f"{0 if args.no_latency else args.p500:.0%} HTTP 500; median of {args.trials} interleaved trials [range]")
    header = ("conc", "samples/s", "range", "speedup", "range", "in flight", "requests", "429", "500", "lost", "dup",
              "errors", "NaN", "cpu/sample", "load")
    print(" ".join(f"{h:>11}" for h in header))
    for level in levels:
        rs, ups = runs[level], speedups[level]
        rates = [r["samples_per_s"] for r in rs]
        row = (level, f"{statistics.median(rates):.3f}", f"{min(rates):.3f}–{max(rates):.3f}",
               f"{statistics.median(ups):.1f}×", f"{min(ups):.1f}–{max(ups):.1f}",
               f"{statistics.median(r['in_flight_avg'] for r in rs):.1f}",
               round(statistics.median(r["requests"] for r in rs)), sum(r["http_429"] for r in rs),
               sum(r["http_500"] for r in rs), sum(r["lost"] for r in rs), sum(r["duplicated"] for r in rs),
               sum(r["errors"] for r in rs), sum(r["judged_nan"] for r in rs),
               f"{statistics.median(r['cpu_s_per_sample'] for r in rs):.3f}",
               f"{statistics.median(r['load_avg_1'] for r in rs):.1f}")
        print(" ".join(f"{c!s:>11}" for c in row))
    print("in flight: the server's busy seconds / wall seconds; cpu/sample: this process's CPU seconds per sample "
          "(the server's are not in it); load: 1-minute load average at the end of a level")
    # A run's last samples start alone: with n samples of equal length, concurrency c finishes in
    # ceil(n / c) rounds, so no client can beat n / ceil(n / c) times concurrency 1 (24 samples at 16: 12x).
    ceilings = {level: n_samples / math.ceil(n_samples / level) for level in levels}
    print("ceiling from the run's length alone (equal samples, n / ceil(n / concurrency)): "
          + ", ".join(f"{level}: {ceiling:.1f}x" for level, ceiling in ceilings.items()))
    if args.json:
        args.json.write_text(json.dumps({
            "samples_per_s_median": {str(k): statistics.median(r["samples_per_s"] for r in v) for k, v in runs.items()},
            "speedup_median": {str(k): statistics.median(v) for k, v in speedups.items()},
            "speedup_range": {str(k): [min(v), max(v)] for k, v in speedups.items()},
            "ceiling": {str(k): v for k, v in ceilings.items()}, "judged_metrics": judged, "runs": {str(k): v for k, v in runs.items()},
            "command": " ".join(sys.argv)}, indent=2))


if __name__ == "__main__":
    main()
