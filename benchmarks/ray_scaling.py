"""Index build and eval throughput on Ray (1 and 2 workers) against the single-process path, on this
machine, in one run, and a check that every path gives identical outputs.

    PYTHONPATH=. python benchmarks/ray_scaling.py [--dataset texas_childcare] [--samples 16]
        [--modes bm25,dense] [--latency 0.2] [--workers 1,2] [--json FILE]

- Index: ``build_index`` of DATASET into a fresh data dir per path (cold parse and embedding
  caches): in this process (PDFs parsed by a local process pool, MiniLM in this process), then
  ``--ray`` with N workers (parse tasks, embedding actors) on a local Ray instance with N CPUs.
  Identical = same fingerprint, chunk ids, node text and metadata; vectors compared by max |Δ|.
- Eval: ``run_evaluation`` of SAMPLES questions in MODES against an OpenAI-compatible fake server
  on 127.0.0.1 (``--latency`` seconds per call; generator and faithfulness judge), each path with
  its own empty answer cache: in this process at --concurrency 1 and at --concurrency N (threads),
  then ``--ray`` with N actors. Identical = same records (answers, contexts, scores) and per-mode table.
- Reference figure: MiniLM chunks/s in this process on the dataset's chunks.

One local Ray instance with max(--workers) CPUs serves every Ray path (N workers = N actors or N
parse tasks at once); its start-up is outside the timings, each path's own model loads are inside
(the local path's as a fresh `rag-lab index` pays them; the eval's driver is warmed up first).
Needs the dataset's index for the eval part (``rag-lab index DATASET``), built here if missing.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.distributed.cluster import RayCluster
from rag_lab.distributed.ingest import ray_executor
from rag_lab.distributed.samples import ray_sample_executor
from rag_lab.evaluate import load_run, run_evaluation
from rag_lab.evaluate.store.run_folder import read_samples
from rag_lab.index import CorpusIndex, build_index
from tests.evaluate.test_judged_metrics import judge_or_quote
from tests.models.fake_openai_server import FakeOpenAI

REPO = Path(__file__).resolve().parents[1]
VOLATILE = ("latency", "cached")


def start_ray(cpus: int, attempts: int = 4) -> None:
    """One local Ray instance with ``cpus`` CPUs for every Ray path (N workers = N actors / N parse
    tasks at once, one CPU each). Retried: Ray gives its raylet 30 s to register, which a busy
    machine can exceed."""
    import ray

    options = dict(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False,
                   runtime_env={"env_vars": {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}})
    for attempt in range(attempts):
        try:
            ray.init(**options)
            return
        except Exception as exc:  # noqa: BLE001
            if "timed out during startup" not in str(exc) or attempt == attempts - 1:
                raise
            ray.shutdown()


def index_snapshot(settings, dataset: str) -> dict:
    index = CorpusIndex.open(dataset, settings)
    ids = sorted(doc["node_id"] for doc in index.bm25.corpus)
    vectors, payloads = index.vectors.dense_vectors(ids), index.vectors.payloads(ids)
    nodes = [json.loads(payloads[i]["_node_content"]) for i in ids]
    return {"fingerprint": index.manifest.fingerprint, "ids": ids,
            "nodes": [(n["text"], n["metadata"]) for n in nodes],
            "vectors": np.array([vectors[i] for i in ids], dtype=np.float32)}


def minilm_reference(settings, dataset: str) -> float:
    """MiniLM chunks/s in this process (the model loaded and warm), on the dataset's chunks (≥ 256 texts)."""
    from rag_lab.models import get_embed_model

    index = CorpusIndex.open(dataset, settings)
    texts = [json.loads(p["_node_content"])["text"]
             for p in index.vectors.payloads([d["node_id"] for d in index.bm25.corpus]).values()]
    texts = [texts[i % len(texts)] for i in range(max(256, len(texts)))]  # enough to time (a small corpus repeats)
    model = get_embed_model(settings)
    model.get_text_embedding_batch(texts[:8])  # warm
    started = time.perf_counter()
    model.get_text_embedding_batch(texts)
    return len(texts) / (time.perf_counter() - started)


def bench_index(args, root: Path) -> dict:
    results, snapshots = {}, {}
    paths = [("local", None)] + [(f"ray-{n}", n) for n in args.workers]
    for name, workers in paths:
        settings = load_settings(data_dir=root / f"index-{name}", datasets_dir=REPO / "datasets")
        dataset = resolve_dataset(args.dataset, settings.datasets_dir)
        cluster = RayCluster(workers=workers) if workers is not None else None
        started = time.perf_counter()
        result = build_index(dataset, settings, progress=False,
                             executor=ray_executor(cluster, settings) if cluster is not None else None)
        seconds = time.perf_counter() - started
        results[name] = {"seconds": seconds, "chunks": result.manifest.n_chunks,
                         "chunks_per_s": result.manifest.n_chunks / seconds}
        snapshots[name] = index_snapshot(settings, args.dataset)
        print(f"  index {name:>8}: {seconds:6.1f} s  ({results[name]['chunks_per_s']:.1f} chunks/s)", flush=True)
    base = snapshots["local"]
    for name, snap in snapshots.items():
        same = snap["fingerprint"] == base["fingerprint"] and snap["ids"] == base["ids"] and snap["nodes"] == base["nodes"]
        results[name].update(identical=same, max_vector_delta=float(np.abs(snap["vectors"] - base["vectors"]).max()),
                             ratio=results["local"]["seconds"] / results[name]["seconds"])
    results["minilm_chunks_per_s"] = minilm_reference(load_settings(data_dir=root / "index-local",
                                                                    datasets_dir=REPO / "datasets"), args.dataset)
    return results


def _records(out: Path, modes: list[str]) -> dict:
    return {mode: sorted(({k: v for k, v in r.items() if k not in VOLATILE} for r in read_samples(out / mode / "samples.jsonl")),
                         key=lambda r: r["id"]) for mode in modes}


def bench_eval(args, root: Path) -> dict:
    base_settings = load_settings(data_dir=root / "index-local", datasets_dir=REPO / "datasets")
    server = FakeOpenAI(reply=judge_or_quote, latency=args.latency)
    modes = args.modes.split(",")
    paths = [("warm-up", 1, None), ("local-c1", 1, None)] + \
            [(f"local-c{n}", n, None) for n in args.workers if n > 1] + [(f"ray-{n}", n, n) for n in args.workers]
    results, outputs = {}, {}
    try:
        for name, concurrency, workers in paths:
            samples = 2 if name == "warm-up" else args.samples
            data_dir = root / f"eval-{name}"
            data_dir.mkdir()
            (data_dir / "indexes").symlink_to(base_settings.index_dir, target_is_directory=True)
            settings = base_settings.model_copy(update={
                "data_dir": data_dir, "llm_provider": "openai_compatible", "llm_base_url": server.url,
                "llm_model": "fake-gen", "judge_base_url": server.url})
            cluster = RayCluster(workers=workers) if workers is not None else None
            started = time.perf_counter()
            run_evaluation(args.dataset, settings, modes, root / f"run-{name}", limit=samples,
                           judge="openai_compatible:fake-judge", rerank=False, progress=False,
                           metrics=["faithfulness", "rouge_l"], concurrency=concurrency,
                           executor=ray_sample_executor(cluster) if cluster is not None else None)
            seconds = time.perf_counter() - started
            if name == "warm-up":  # this process's models and metrics loaded once, outside the timings
                continue
            n = args.samples * len(modes)
            results[name] = {"seconds": seconds, "samples_per_s": n / seconds}
            outputs[name] = (_records(root / f"run-{name}", modes), load_run(root / f"run-{name}").summary
                             .sort_values(["mode", "metric"]).reset_index(drop=True))
            print(f"  eval  {name:>8}: {seconds:6.1f} s  ({results[name]['samples_per_s']:.2f} samples/s)", flush=True)
    finally:
        server.close()
    base_records, base_table = outputs["local-c1"]
    for name, (records, table) in outputs.items():
        results[name].update(identical=records == base_records and table.equals(base_table),
                             ratio=results[name]["samples_per_s"] / results["local-c1"]["samples_per_s"])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare")
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--modes", default="bm25,dense")
    parser.add_argument("--latency", type=float, default=0.2, help="fake server seconds per call")
    parser.add_argument("--workers", default="1,2", help="Ray worker counts to compare")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args()
    args.workers = [int(w) for w in args.workers.split(",")]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="ray-scaling-") as tmp:
        root = Path(tmp)
        print(f"{args.dataset}: {os.cpu_count()} CPUs on this machine", flush=True)
        start_ray(max(args.workers))
        try:
            index = bench_index(args, root)
            evaluation = bench_eval(args, root)
        finally:
            import ray

            ray.shutdown()
    print(f"\nreference: MiniLM {index['minilm_chunks_per_s']:.1f} chunks/s in one process on this machine")
    print(f"\nindex build of {args.dataset} ({index['local']['chunks']} chunks, cold caches)")
    print(f"{'path':>10} {'seconds':>8} {'chunks/s':>9} {'× local':>8} {'identical':>10} {'max |Δvec|':>11}")
    for name, r in index.items():
        if isinstance(r, dict):
            print(f"{name:>10} {r['seconds']:8.1f} {r['chunks_per_s']:9.1f} {r['ratio']:8.2f} "
                  f"{str(r['identical']):>10} {r['max_vector_delta']:11.1e}")
    print(f"\neval: {args.samples} samples × {args.modes} (generator + faithfulness judge at {args.latency:.2f} s/call)")
    print(f"{'path':>10} {'seconds':>8} {'samples/s':>10} {'× local-c1':>11} {'identical':>10}")
    for name, r in evaluation.items():
        print(f"{name:>10} {r['seconds']:8.1f} {r['samples_per_s']:10.2f} {r['ratio']:11.2f} {str(r['identical']):>10}")
    if args.json:
        Path(args.json).write_text(json.dumps({"index": index, "eval": evaluation}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
