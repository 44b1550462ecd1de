"""Which local generator can the lab trust offline? One table row per candidate model.

    PYTHONPATH=. python benchmarks/offline_models.py [--models smollm2,qwen2.5-coder-0.5b,qwen2.5-coder-1.5b]
        [--n 40] [--tool-calls 20] [--chunks 3] [--seed 0] [--threads N] [--out runs/offline_models]

A fixed, seeded subset of ``texas_childcare_full`` questions whose reference answers state key
facts (numbers, amounts, percentages, codes). Each question gets its **reference chunks**, not
retrieved ones, so retrieval cannot blur the comparison: the ``--chunks`` chunks of the
question's source PDF that state most of the reference's key facts (ties: most question words),
shown in question-word order, through the same engine and prompt as ``rag-lab ask``.

A candidate is a model name, or ``<model>+compress`` for answers from the query-focused compressed
chunks (rag_lab.answer.compress). Per candidate: key-fact recall (mean, seeded bootstrap 95 % CI),
the share of the reference's key facts the context itself states (its ceiling), share of answers that cite a
document and that cite the source PDF, share of well-formed tool calls (the agent's forced
``retrieve_context`` call: a real search query, not junk), prompt and generation tokens per
second (llama.cpp's timings), seconds per answer, peak memory (each model runs in its own
process). Every answer is appended to ``<out>/<model>.jsonl`` as it is made: a rerun skips
what is there, so a crash loses nothing; ``--fresh`` starts over. A smaller ``--n`` asks the first
questions of a larger one's sample (the seeded sample's prefix), so ``--n 80 --table-only`` shows each
row over the questions it answered, and the paired difference to the first row (the default).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_MODELS = ("Qwen2.5-Coder-1.5B-Instruct-Q4_K_M+compress,SmolLM2-135M-Instruct.Q4_1,"
                  "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M+compress,Qwen2.5-Coder-0.5B-Instruct-Q4_K_M,"
                  "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M")
DATASET = "texas_childcare_full"


# --- subset and reference chunks -------------------------------------------------------------
def dataset_dir() -> Path:
    for root in (Path("datasets") / DATASET, Path("/work/shared/datasets") / DATASET):
        if (root / "qa.jsonl").is_file():
            return root
    raise SystemExit(f"{DATASET} not found under datasets/ (vendor it, see datasets/README)")


def _words(text: str) -> set[str]:
    from rag_lab.tokenizer import iter_terms

    return {t.text for t in iter_terms(text)}


def build_subset(n: int, chunks: int, seed: int, chunk_words: int) -> list[dict[str, Any]]:
    """``n`` seeded questions with key facts, each with its reference chunks (text, file, page)."""
    from rag_lab.evaluate.key_facts import extract_key_facts, key_fact_recall
    from rag_lab.ingest.chunking import chunk_documents
    from rag_lab.ingest.loaders import load_folder

    root = dataset_dir()
    records = [json.loads(line) for line in (root / "qa.jsonl").read_text().splitlines() if line.strip()]
    pdfs = {p.name for p in (root / "pdfs").iterdir()}
    usable = sorted((r for r in records if extract_key_facts(r["reference_answer"]) and r.get("source_file") in pdfs),
                    key=lambda r: r["id"])
    picked = random.Random(seed).sample(usable, min(n, len(usable)))
    by_file: dict[str, list] = {}
    for record in picked:
        by_file.setdefault(record["source_file"], [])
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"offline_models_{os.getpid()}"
    for name in by_file:  # load only the PDFs the subset needs
        tmp.mkdir(parents=True, exist_ok=True)
        link = tmp / name
        if not link.exists():
            link.symlink_to((root / "pdfs" / name).resolve())
    documents, _ = load_folder(tmp)
    for node in chunk_documents(documents, chunk_words=chunk_words):
        by_file[node.metadata["filename"]].append(node)
    subset = []
    for record in picked:
        q_words = _words(record["question"])
        scored = [((key_fact_recall(node.text, record["reference_answer"]) or 0.0), len(q_words & _words(node.text)), node)
                  for node in by_file[record["source_file"]]]
        top = sorted(scored, key=lambda s: (s[0], s[1]), reverse=True)[:chunks]
        top.sort(key=lambda s: s[1], reverse=True)  # shown in question-word order, as a retriever would
        subset.append({"id": record["id"], "question": record["question"], "reference": record["reference_answer"],
                       "source_file": record["source_file"],
                       "chunks": [{"text": node.text, "filename": node.metadata["filename"], "page": node.metadata.get("page"),
                                   "facts_in_chunk": round(facts, 3)} for facts, _, node in top]})
    return subset


# --- one model (worker process) --------------------------------------------------------------
class _Static:
    """The question's reference chunks as a LlamaIndex retriever."""

    @staticmethod
    def make(chunks: list[dict[str, Any]]):
        from llama_index.core.base.base_retriever import BaseRetriever
        from llama_index.core.schema import NodeWithScore, TextNode

        class StaticRetriever(BaseRetriever):
            def _retrieve(self, query_bundle):
                return [NodeWithScore(node=TextNode(text=c["text"], metadata={"filename": c["filename"], "page": c["page"],
                                                                               "doc_id": c["filename"]}), score=1.0 / (i + 1))
                        for i, c in enumerate(chunks)]

        return StaticRetriever()


def _append(path: Path, record: dict[str, Any]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _done(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    done = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:  # a line cut by a crash
                continue
            done[(record["task"], record["id"])] = record
    return done


COMPRESSED = "+compress"


def run_worker(candidate: str, subset: list[dict[str, Any]], out: Path, tool_calls: int, threads: int | None) -> None:
    """One candidate: a model name, ``+compress`` for answers from compressed chunks (tool calls
    are not affected by compression: they are checked for the plain candidate only)."""
    from rag_lab.answer.agent_reply import SYSTEM_PROMPT
    from rag_lab.answer.agent_tool import RetrievalTool, clean_query
    from rag_lab.answer.engine import build_engine
    from rag_lab.config import load_settings
    from rag_lab.evaluate.key_facts import key_fact_recall
    from rag_lab.models.llm import get_llm, track_usage
    from llama_index.core.llms import ChatMessage

    model = candidate.removesuffix(COMPRESSED)
    compress = "on" if candidate.endswith(COMPRESSED) else "off"
    if compress == "on":
        tool_calls = 0
    settings = load_settings(llm_provider="local", llm_model=model, llm_max_tokens=192, llm_threads=threads,
                             compress=compress)
    cache = out / f"{candidate}.jsonl"
    done = _done(cache)
    start = time.perf_counter()
    llm = get_llm(settings)
    load_seconds = time.perf_counter() - start
    runtime = llm.runtime
    # The agent's first step with the local model is a forced retrieve_context call; it is checked
    # on the first ``tool_calls`` questions, right after their answer (a cut run has both).
    tool = RetrievalTool(_Static.make([]), max_calls=1).as_tool()
    for number, item in enumerate(subset, start=1):
        if ("answer", item["id"]) not in done:
            engine = build_engine("fusion", settings, llm=llm, retriever=_Static.make(item["chunks"]), rerank=False,
                                  top_n=len(item["chunks"]))
            clock, cpu = time.perf_counter(), time.process_time()
            with track_usage() as usage:
                response = engine.query(item["question"])
            seconds, cpu_seconds = time.perf_counter() - clock, time.process_time() - cpu
            cited = [s.doc for s in response.metadata["cited_sources"]]
            timings = runtime.last_timings
            # cpu_seconds (all threads of this process): on a machine shared with other work the wall
            # time says little; CPU time per answer is what an idle machine would need (1 thread).
            record = {"task": "answer", "id": item["id"], "answer": str(response), "seconds": seconds,
                      "cpu_seconds": cpu_seconds,
                      "recall": key_fact_recall(str(response), item["reference"]), "cites": bool(cited),
                      "cites_source": item["source_file"] in cited, "prompt_tokens": usage.prompt_tokens,
                      "completion_tokens": usage.completion_tokens,
                      "prompt_ms": timings.get("prompt_ms"), "prompt_n": timings.get("prompt_n"),
                      "predicted_ms": timings.get("predicted_ms"), "predicted_n": timings.get("predicted_n"),
                      "chunks_in_prompt": len(response.source_nodes)}
            _append(cache, record)
            print(f"[{candidate}] answer {number}/{len(subset)}: {seconds:.1f}s recall={record['recall']:.2f} "
                  f"cites={record['cites']}", flush=True)
        if number <= tool_calls and ("tool", item["id"]) not in done:
            clock = time.perf_counter()
            response = llm.chat_with_tools([tool], user_msg=item["question"], tool_required=True,
                                           chat_history=[ChatMessage(role="system", content=SYSTEM_PROMPT)])
            seconds = time.perf_counter() - clock
            calls = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
            query = calls[0].tool_kwargs.get("query") if calls else None
            _, fallback = clean_query(query, item["question"])
            record = {"task": "tool", "id": item["id"], "arguments": calls[0].tool_kwargs if calls else None,
                      "well_formed": bool(calls) and not fallback, "seconds": seconds}
            _append(cache, record)
            print(f"[{candidate}] tool call {number}: {seconds:.1f}s {record['arguments']}", flush=True)
    meta = {"task": "meta", "id": f"run-{time.time():.0f}", "load_seconds": load_seconds,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "threads": runtime.threads}
    _append(cache, meta)


# --- the table -------------------------------------------------------------------------------
def bootstrap_ci(values: list[float], seed: int, resamples: int = 2000) -> tuple[float, float]:
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def context_coverage(candidate: str, subset: list[dict[str, Any]]) -> tuple[float, float]:
    """(mean share of the reference's key facts that the context given to the model states, mean
    share of the whole chunks' characters it keeps): the 3 chunks whole, or compressed
    (``+compress``). The first is an upper bound for the answer's recall."""
    from llama_index.core.schema import NodeWithScore, TextNode

    from rag_lab.answer.compress import compress_nodes
    from rag_lab.config import load_settings
    from rag_lab.evaluate.key_facts import key_fact_recall

    lines = load_settings().compress_lines
    shares, lengths = [], []
    for item in subset:
        nodes = [NodeWithScore(node=TextNode(text=c["text"]), score=1.0) for c in item["chunks"]]
        whole = sum(len(n.node.get_content()) for n in nodes)
        if candidate.endswith(COMPRESSED):
            nodes, _ = compress_nodes(nodes, item["question"], lines)
        text = "\n".join(n.node.get_content() for n in nodes)
        shares.append(key_fact_recall(text, item["reference"]) or 0.0)
        lengths.append(sum(len(n.node.get_content()) for n in nodes) / whole)
    return float(np.mean(shares)), float(np.mean(lengths))


def summarise(model: str, subset: list[dict[str, Any]], out: Path, seed: int) -> dict[str, Any] | None:
    records = _done(out / f"{model}.jsonl")
    ids = [q["id"] for q in subset]
    answers = [records[("answer", i)] for i in ids if ("answer", i) in records]
    answered = [q for q in subset if ("answer", q["id"]) in records]  # a row may cover fewer questions
    tools = [r for (task, _), r in records.items() if task == "tool"]
    metas = [r for (task, _), r in records.items() if task == "meta"]
    if not answers:
        return None
    recalls = [a["recall"] for a in answers if a["recall"] is not None]
    low, high = bootstrap_ci(recalls, seed)
    prompt_ms = sum(a["prompt_ms"] or 0 for a in answers)
    gen_ms = sum(a["predicted_ms"] or 0 for a in answers)
    return {
        "model": model, "answers": len(answers), "recall_by_id": {a["id"]: a["recall"] for a in answers if a["recall"] is not None},
        "key_fact_recall": float(np.mean(recalls)), "ci_low": low,
        "ci_high": high, **dict(zip(("context_key_facts", "context_length"), context_coverage(model, answered))),
        "cites": float(np.mean([a["cites"] for a in answers])),
        "cites_source": float(np.mean([a["cites_source"] for a in answers])),
        "tool_calls": len(tools), "well_formed_tool_calls": float(np.mean([t["well_formed"] for t in tools])) if tools else None,
        "prompt_tok_s": 1000 * sum(a["prompt_n"] or 0 for a in answers) / prompt_ms if prompt_ms else None,
        "gen_tok_s": 1000 * sum(a["predicted_n"] or 0 for a in answers) / gen_ms if gen_ms else None,
        "s_per_answer": float(np.mean([a["seconds"] for a in answers])),
        "cpu_s_per_answer": float(np.mean([a["cpu_seconds"] for a in answers])) if all("cpu_seconds" in a for a in answers) else None,
        "prompt_tokens": float(np.mean([a["prompt_n"] or 0 for a in answers])),
        "peak_rss_mb": max((m["peak_rss_mb"] for m in metas), default=None),
        "load_s": metas[-1]["load_seconds"] if metas else None,
    }


def paired_difference(row: dict[str, Any], baseline: dict[str, Any], seed: int) -> tuple[float, float, float, int]:
    """Mean recall of ``baseline`` minus ``row`` on the questions both answered, with a seeded paired
    bootstrap 95 % CI: the same questions, so question difficulty does not widen it."""
    common = [i for i in baseline["recall_by_id"] if i in row["recall_by_id"]]
    deltas = [baseline["recall_by_id"][i] - row["recall_by_id"][i] for i in common]
    low, high = bootstrap_ci(deltas, seed)
    return float(np.mean(deltas)), low, high, len(common)


def render(rows: list[dict[str, Any]], seed: int = 0) -> str:
    def f(value: Any, spec: str) -> str:
        return "—" if value is None else format(value, spec)

    lines = ["| model | n | key-fact recall [95 % CI] | key facts in context (its length) | cites | cites source PDF | well-formed tool calls | "
             "prompt tok/s | gen tok/s | s/answer (wall) | CPU s/answer | prompt tokens | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['answers']} | {r['key_fact_recall']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}] | "
                     f"{r['context_key_facts']:.2f} ({r['context_length']:.0%}) | "
                     f"{r['cites']:.0%} | {r['cites_source']:.0%} | "
                     f"{f(r['well_formed_tool_calls'], '.0%')} ({r['tool_calls']}) | {f(r['prompt_tok_s'], '.0f')} | "
                     f"{f(r['gen_tok_s'], '.1f')} | {r['s_per_answer']:.1f} | {f(r.get('cpu_s_per_answer'), '.1f')} | "
                     f"{r['prompt_tokens']:.0f} | {f(r['peak_rss_mb'], '.0f')} |")
    if len(rows) > 1:
        lines.append(f"\nPaired: recall of {rows[0]['model']} minus each other candidate's, on the questions both "
                     "answered (seeded paired bootstrap 95 % CI):\n")
        for r in rows[1:]:
            delta, low, high, n = paired_difference(r, rows[0], seed)
            lines.append(f"- {r['model']}: {delta:+.2f} [{low:+.2f}, {high:+.2f}] (n = {n})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--n", type=int, default=40, help="questions (seeded subset)")
    parser.add_argument("--tool-calls", type=int, default=20, help="questions for the forced tool-call check")
    parser.add_argument("--chunks", type=int, default=3, help="reference chunks per question")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the sample's first SKIP questions (--n 100 --skip 80 --out runs/offline_models_dev: "
                             "a dev split disjoint from the 80-question bench)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("runs/offline_models"))
    parser.add_argument("--fresh", action="store_true", help="forget cached answers")
    parser.add_argument("--table-only", action="store_true", help="print the table from the cache")
    parser.add_argument("--parallel", action="store_true",
                        help="run the models at the same time (one process each; use with --threads 1)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    subset_file = args.out / f"subset_n{args.n}_c{args.chunks}_s{args.seed}.json"
    if not subset_file.is_file():
        from rag_lab.config import load_settings

        subset_file.write_text(json.dumps(build_subset(args.n, args.chunks, args.seed, load_settings().chunk_words), indent=1))
    subset = json.loads(subset_file.read_text())[args.skip:]
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if args.worker:
        run_worker(args.worker, subset, args.out, args.tool_calls, args.threads)
        return
    if not args.table_only:
        running = []
        for model in models:
            if args.fresh:
                (args.out / f"{model}.jsonl").unlink(missing_ok=True)
            command = [sys.executable, __file__, "--worker", model, "--n", str(args.n), "--chunks", str(args.chunks),
                       "--seed", str(args.seed), "--skip", str(args.skip), "--tool-calls", str(args.tool_calls),
                       "--out", str(args.out)]
            if args.threads:
                command += ["--threads", str(args.threads)]
            running.append(subprocess.Popen(command))
            if not args.parallel:
                running[-1].wait()
        if any(process.wait() != 0 for process in running):
            raise SystemExit("a model's run failed (its answers so far are kept; rerun to resume)")
    rows = [row for model in models if (row := summarise(model, subset, args.out, args.seed))]
    table = render(rows, args.seed)
    print(f"\n{DATASET}: {len(subset)} questions, {args.chunks} reference chunks each, seed {args.seed}"
          + (f", the sample's first {args.skip} left out" if args.skip else "") + "\n")
    print(table)
    (args.out / "table.md").write_text(table + "\n")
    (args.out / "summary.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
