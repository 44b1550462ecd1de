"""Which local generator can the lab trust offline? One table row per candidate model and context.

    PYTHONPATH=. python benchmarks/offline_models.py [--models M1,M2+compress] [--n 40] [--dev]
        [--contexts oracle,retrieved] [--tool-calls 10] [--chunks 3] [--seed 0] [--threads N]
        [--out runs/offline_models] [--fresh] [--table-only]

A fixed, seeded subset of ``texas_childcare_full`` questions whose reference answers state key
facts the question does not (numbers, amounts, percentages, codes), drawn from OUTSIDE the
dataset's declared dev split (``dev_split.txt``, :mod:`rag_lab.splits`): tuning looks at the dev
questions only, so the bench never reports the numbers a design choice was tuned on. ``--dev``
runs on the dev split instead (for tuning, e.g. a prompt decision).

Two contexts per question (``--contexts``):

- ``oracle``: its **reference chunks**, the ``--chunks`` chunks of the question's source PDF that state
  most of the reference's key facts (ties: most question words), shown in question-word order —
  chosen with the reference answer, so retrieval cannot blur the comparison of models;
- ``retrieved``: what the product actually gives the model, the default mode's chunks (``rag-lab ask``:
  fusion's top 30 through the product's retriever and index, the first 7 kept, no rerank).

Both go through the same engine and prompt as ``rag-lab ask``. A candidate is a model name,
``<model>+compress`` for answers from the query-focused compressed chunks
(rag_lab.answer.compress), ``+prompt66f75d1`` for the JSON answer prompt of commit 66f75d1 (before
"restate what the question asks about"; for the prompt decision on the dev split). Per row:
key-fact recall (the reference's facts, less those the question states, that the answer states;
mean, seeded bootstrap 95 % CI), key-fact precision (the answer's facts, less the question's, that
the reference states: a dump of numbers loses it), the share of the reference's key facts the
context itself states (its ceiling), share of answers that cite a document and that cite the
source PDF, share of well-formed tool calls (the agent's forced ``retrieve_context`` call, oracle
rows), tokens per second (llama.cpp's timings), seconds per answer, peak memory (each model runs
in its own process).

Every answer is appended to ``<out>/<candidate>@<context>.jsonl`` as it is made, keyed by everything
that shapes it (model, prompt version and prompt, question, the chunks' text, file and page,
compression and generation settings): a rerun skips only identical work, so a crash loses nothing
and a changed input is answered again; ``--fresh`` forgets them. Metrics are computed when the
table is made, from the stored answers. The subset file's name is a hash of its inputs (qa.jsonl,
the dev split, the PDFs, the index, n, chunks, seed): it is rebuilt when any changes, and on
``--fresh``. A smaller ``--n`` asks the first questions of a larger one's sample (a seeded shuffle's
prefix).
"""

from __future__ import annotations

import argparse
import hashlib
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
CONTEXTS = ("oracle", "retrieved")
# Bumped when how the subset is built changes in code. 2: dev split left out, retrieved context,
# only questions whose reference states a fact the question does not.
SUBSET_REVISION = "2"
COMPRESSED = "+compress"
OLD_PROMPT = "+prompt66f75d1"
# The JSON answer prompt of commit 66f75d1 (before it asked for sentences that restate the question).
PROMPT_66F75D1 = (
    "Answer the question using only the numbered documents below.\n"
    'Reply in JSON with two fields: "answer", the answer in one or two sentences with the exact '
    'figures (with their $ or % signs), names or dates from the documents, and "cited", the numbers '
    "of the documents the answer comes from.\n"
    "If the documents do not contain the answer, the answer is: I couldn't find information about that.\n\n"
    "{context_str}\n\n"
    "Question: {query_str}\n"
)


# --- subset: questions, reference chunks, retrieved chunks -------------------------------------
def dataset_dir() -> Path:
    for root in (Path("datasets") / DATASET, Path("/work/shared/datasets") / DATASET):
        if (root / "qa.jsonl").is_file():
            return root
    raise SystemExit(f"{DATASET} not found under datasets/ (vendor it, see datasets/README)")


def _words(text: str) -> set[str]:
    from rag_lab.tokenizer import iter_terms

    return {t.text for t in iter_terms(text)}


def _sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def subset_inputs(n: int, chunks: int, seed: int, dev: bool, contexts: list[str]) -> dict[str, Any]:
    """Everything the subset file depends on (its name is their hash)."""
    from rag_lab.answer.engine import DEFAULT_TOP_K
    from rag_lab.answer.rerank import DEFAULT_TOP_N
    from rag_lab.config import load_settings
    from rag_lab.splits import dev_split_path
    from rag_lab.tokenizer import TOKENIZER_VERSION

    root = dataset_dir()
    settings = load_settings()
    split = dev_split_path(root)
    inputs = {"revision": SUBSET_REVISION, "n": n, "chunks": chunks, "seed": seed, "dev": dev,
              "qa": _sha((root / "qa.jsonl").read_bytes()), "dev_split": _sha(split.read_bytes()) if split.is_file() else None,
              "pdfs": {p.name: _sha(p.read_bytes()) for p in sorted((root / "pdfs").iterdir())},
              "chunk_words": settings.chunk_words, "tokenizer": TOKENIZER_VERSION, "contexts": sorted(contexts)}
    if "retrieved" in contexts:
        from rag_lab.index.handle import CorpusIndex

        index = CorpusIndex.open(DATASET, settings)
        inputs["retrieval"] = {"mode": "fusion", "top_k": DEFAULT_TOP_K, "top_n": DEFAULT_TOP_N,
                               "index": getattr(index.manifest, "fingerprint", None),
                               "embed_model": settings.embed_model_name, "backend": settings.vector_backend}
    return inputs


def _chunk(node, facts: float | None = None) -> dict[str, Any]:
    record = {"text": node.get_content(), "filename": node.metadata.get("filename"), "page": node.metadata.get("page")}
    return record | ({"facts_in_chunk": round(facts, 3)} if facts is not None else {})


def build_subset(n: int, chunks: int, seed: int, dev: bool, contexts: list[str]) -> list[dict[str, Any]]:
    """``n`` seeded questions (outside the dev split, or in it with ``dev``) whose reference states
    a key fact the question does not, each with its oracle chunks and/or retrieved chunks."""
    from rag_lab.config import load_settings
    from rag_lab.evaluate.facts.key_facts import has_key_facts, key_fact_recall
    from rag_lab.ingest.chunking import chunk_documents
    from rag_lab.ingest.loaders import load_folder
    from rag_lab.splits import read_dev_split

    root = dataset_dir()
    settings = load_settings()
    dev_ids = read_dev_split(root)
    if not dev_ids:
        raise SystemExit(f"{root} declares no dev split (dev_split.txt): make one with rag-lab split {DATASET}")
    records = [json.loads(line) for line in (root / "qa.jsonl").read_text().splitlines() if line.strip()]
    pdfs = {p.name for p in (root / "pdfs").iterdir()}
    usable = sorted((r for r in records if (r["id"] in dev_ids) == dev and has_key_facts(r["reference_answer"], r["question"])
                     and Path(r.get("source_file") or "").name in pdfs), key=lambda r: r["id"])
    random.Random(seed).shuffle(usable)
    picked = usable[:n]  # a seeded shuffle's prefix: a smaller n asks the first questions of a larger one
    subset = [{"id": r["id"], "question": r["question"], "reference": r["reference_answer"],
               "source_file": Path(r["source_file"]).name} for r in picked]
    if "oracle" in contexts:
        by_file: dict[str, list] = {item["source_file"]: [] for item in subset}
        tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"offline_models_{os.getpid()}"
        tmp.mkdir(parents=True, exist_ok=True)
        for name in by_file:  # load only the PDFs the subset needs
            if not (link := tmp / name).exists():
                link.symlink_to((root / "pdfs" / name).resolve())
        documents, _ = load_folder(tmp)
        for node in chunk_documents(documents, chunk_words=settings.chunk_words):
            by_file[node.metadata["filename"]].append(node)
        for item in subset:
            q_words = _words(item["question"])
            scored = [((key_fact_recall(node.text, item["reference"], item["question"]) or 0.0),
                       len(q_words & _words(node.text)), node) for node in by_file[item["source_file"]]]
            top = sorted(scored, key=lambda s: (s[0], s[1]), reverse=True)[:chunks]
            top.sort(key=lambda s: s[1], reverse=True)  # shown in question-word order, as a retriever would
            item["oracle"] = [_chunk(node, facts) for facts, _, node in top]
    if "retrieved" in contexts:
        from rag_lab.answer.engine import DEFAULT_TOP_K
        from rag_lab.answer.rerank import DEFAULT_TOP_N
        from rag_lab.retrieve import build_retriever

        retriever = build_retriever("fusion", settings, DATASET, top_k=DEFAULT_TOP_K)
        for item in subset:  # what `rag-lab ask` (fusion, no rerank) gives the model: the first top_n
            item["retrieved"] = [_chunk(r.node) for r in retriever.retrieve(item["question"])[:DEFAULT_TOP_N]]
    return subset


def subset_path(out: Path, inputs: dict[str, Any]) -> Path:
    """``subset_<bench|dev>_n<N>_<hash of every input but n>.json``."""
    split = "dev" if inputs["dev"] else "bench"
    return out / f"subset_{split}_n{inputs['n']}_{_sha(json.dumps(inputs | {'n': None}, sort_keys=True))[:12]}.json"


def larger_subset(path: Path, n: int) -> Path | None:
    """A subset file of the same inputs and more questions: its first ``n`` are this subset (a seeded
    shuffle's prefix, each question's chunks chosen on its own), so it is sliced, not rebuilt."""
    split, _, digest = path.stem.split("_", 2)[1], None, path.stem.rsplit("_", 1)[1]
    for other in sorted(path.parent.glob(f"subset_{split}_n*_{digest}.json")):
        if int(other.stem.split("_")[2][1:]) >= n:
            return other
    return None


# --- one candidate on one context (worker process) ----------------------------------------------
class _Static:
    """Given chunks as a LlamaIndex retriever."""

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
    """Stored records by (task, key); a record without a key (an older bench's) is never reused."""
    done = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:  # a line cut by a crash
                continue
            if record.get("key"):
                done[(record["task"], record["key"])] = record
    return done


def parse_candidate(candidate: str) -> tuple[str, str, str | None]:
    """``model[+compress][+prompt66f75d1]`` → (model, compress on|off, the prompt override or None)."""
    model, compress, prompt = candidate, "off", None
    if model.endswith(OLD_PROMPT):
        model, prompt = model.removesuffix(OLD_PROMPT), PROMPT_66F75D1
    if model.endswith(COMPRESSED):
        model, compress = model.removesuffix(COMPRESSED), "on"
    return model, compress, prompt


def candidate_settings(candidate: str, threads: int | None = None):
    from rag_lab.config import load_settings

    model, compress, _ = parse_candidate(candidate)
    return load_settings(llm_provider="local", llm_model=model, llm_max_tokens=192, llm_threads=threads, compress=compress)


def answer_key(candidate: str, item: dict[str, Any], chunks: list[dict[str, Any]], settings) -> str:
    """Everything that shapes an answer: model, prompts (answering.prompt_version and an override),
    question, each chunk's text, file and page, compression and generation settings."""
    from rag_lab.evaluate.plan.answering import prompt_version

    model, _, prompt = parse_candidate(candidate)
    payload = {"task": "answer", "model": model, "prompt_version": prompt_version(), "prompt": prompt,
               "question": item["question"], "chunks": [[c["text"], c["filename"], c["page"]] for c in chunks],
               "context_lines": settings.context_lines, "max_tokens": settings.llm_max_tokens,
               "temperature": settings.llm_temperature}
    return _sha(json.dumps(payload, sort_keys=True))


def tool_key(candidate: str, item: dict[str, Any]) -> str:
    from rag_lab.answer.agent_reply import SYSTEM_PROMPT
    from rag_lab.answer.agent_tool import RetrievalTool

    metadata = RetrievalTool(_Static.make([]), max_calls=1).as_tool().metadata
    payload = {"task": "tool", "model": parse_candidate(candidate)[0], "system": SYSTEM_PROMPT,
               "tool": [metadata.name, metadata.description], "question": item["question"]}
    return _sha(json.dumps(payload, sort_keys=True))


def cache_path(out: Path, candidate: str, context: str) -> Path:
    return out / f"{candidate}@{context}.jsonl"


def run_worker(candidate: str, context: str, subset: list[dict[str, Any]], out: Path, tool_calls: int,
               threads: int | None) -> None:
    """One candidate on one context. Tool calls (not affected by compression or the answer prompt)
    are checked for plain candidates on the oracle context only."""
    from llama_index.core.llms import ChatMessage
    from llama_index.core.prompts import PromptTemplate

    from rag_lab.answer.agent_reply import SYSTEM_PROMPT
    from rag_lab.answer.agent_tool import RetrievalTool, clean_query
    from rag_lab.answer.engine import build_engine
    from rag_lab.models.llm import get_llm, track_usage

    model, compress, prompt = parse_candidate(candidate)
    if compress == "on" or prompt is not None or context != "oracle":
        tool_calls = 0
    settings = candidate_settings(candidate, threads)
    cache = cache_path(out, candidate, context)
    done = _done(cache)
    start = time.perf_counter()
    llm = get_llm(settings)
    load_seconds = time.perf_counter() - start
    runtime = llm.runtime
    # The agent's first step with the local model is a forced retrieve_context call; it is checked
    # on the first ``tool_calls`` questions, right after their answer (a cut run has both).
    tool = RetrievalTool(_Static.make([]), max_calls=1).as_tool()
    for number, item in enumerate(subset, start=1):
        chunks = item[context]
        key = answer_key(candidate, item, chunks, settings)
        if ("answer", key) not in done:
            engine = build_engine("fusion", settings, llm=llm, retriever=_Static.make(chunks), rerank=False,
                                  top_n=len(chunks))
            if prompt is not None:
                engine.prompt = PromptTemplate(prompt)
            clock, cpu = time.perf_counter(), time.process_time()
            with track_usage() as usage:
                response = engine.query(item["question"])
            seconds, cpu_seconds = time.perf_counter() - clock, time.process_time() - cpu
            cited = [s.doc for s in response.metadata["cited_sources"]]
            timings = runtime.last_timings
            # cpu_seconds (all threads of this process): on a machine shared with other work the wall
            # time says little; CPU time per answer is what an idle machine would need (1 thread).
            record = {"task": "answer", "key": key, "id": item["id"], "answer": str(response), "seconds": seconds,
                      "cpu_seconds": cpu_seconds, "cites": bool(cited),
                      "cites_source": item["source_file"] in {Path(c).name for c in cited},
                      "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                      "prompt_ms": timings.get("prompt_ms"), "prompt_n": timings.get("prompt_n"),
                      "predicted_ms": timings.get("predicted_ms"), "predicted_n": timings.get("predicted_n"),
                      "chunks_in_prompt": len(response.source_nodes)}
            _append(cache, record)
            print(f"[{candidate}@{context}] answer {number}/{len(subset)}: {seconds:.1f}s cites={record['cites']} "
                  f"{record['answer'][:100]!r}", flush=True)
        if number <= tool_calls and ("tool", tkey := tool_key(candidate, item)) not in done:
            clock = time.perf_counter()
            response = llm.chat_with_tools([tool], user_msg=item["question"], tool_required=True,
                                           chat_history=[ChatMessage(role="system", content=SYSTEM_PROMPT)])
            seconds = time.perf_counter() - clock
            calls = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
            query = calls[0].tool_kwargs.get("query") if calls else None
            _, fallback = clean_query(query, item["question"])
            record = {"task": "tool", "key": tkey, "id": item["id"], "arguments": calls[0].tool_kwargs if calls else None,
                      "well_formed": bool(calls) and not fallback, "seconds": seconds}
            _append(cache, record)
            print(f"[{candidate}@{context}] tool call {number}: {seconds:.1f}s {record['arguments']}", flush=True)
    meta = {"task": "meta", "key": f"run-{time.time():.0f}", "load_seconds": load_seconds,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "threads": runtime.threads}
    _append(cache, meta)


# --- the table -------------------------------------------------------------------------------
def bootstrap_ci(values: list[float], seed: int, resamples: int = 2000) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def context_coverage(candidate: str, items: list[dict[str, Any]], context: str) -> tuple[float, float]:
    """(mean share of the reference's key facts (less the question's) that the context given to the
    model states, mean share of the whole chunks' characters it keeps): the chunks whole, or
    compressed (``+compress``). The first is an upper bound for the answer's recall."""
    from llama_index.core.schema import NodeWithScore, TextNode

    from rag_lab.answer.compress import compress_nodes
    from rag_lab.config import load_settings
    from rag_lab.evaluate.facts.key_facts import key_fact_recall

    lines = load_settings().compress_lines
    shares, lengths = [], []
    for item in items:
        nodes = [NodeWithScore(node=TextNode(text=c["text"], metadata={"filename": c["filename"], "page": c["page"]}),
                               score=1.0) for c in item[context]]
        whole = sum(len(n.node.get_content()) for n in nodes) or 1
        if parse_candidate(candidate)[1] == "on":
            nodes, _ = compress_nodes(nodes, item["question"], lines)
        text = "\n".join(n.node.get_content() for n in nodes)
        shares.append(key_fact_recall(text, item["reference"], item["question"]) or 0.0)
        lengths.append(sum(len(n.node.get_content()) for n in nodes) / whole)
    return float(np.mean(shares)), float(np.mean(lengths))


def score_answers(items: list[dict[str, Any]], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Recall and precision of each stored answer, with the question's facts left out."""
    from rag_lab.evaluate.facts.key_facts import key_fact_precision, key_fact_recall

    return [record | {"recall": key_fact_recall(record["answer"], item["reference"], item["question"]),
                      "precision": key_fact_precision(record["answer"], item["reference"], item["question"])}
            for item, record in zip(items, records)]


def summarise(candidate: str, context: str, subset: list[dict[str, Any]], out: Path, seed: int) -> dict[str, Any] | None:
    records = _done(cache_path(out, candidate, context))
    settings = candidate_settings(candidate)
    found = [(item, records.get(("answer", answer_key(candidate, item, item[context], settings)))) for item in subset]
    answered = [item for item, record in found if record]  # a row may cover fewer questions
    answers = score_answers(answered, [record for _, record in found if record])
    tools = [records[("tool", k)] for item in subset if ("tool", k := tool_key(candidate, item)) in records]
    metas = [r for (task, _), r in records.items() if task == "meta"]
    if not answers:
        return None
    recalls = [a["recall"] for a in answers if a["recall"] is not None]
    precisions = [a["precision"] for a in answers if a["precision"] is not None]
    low, high = bootstrap_ci(recalls, seed)
    p_low, p_high = bootstrap_ci(precisions, seed)
    prompt_ms = sum(a["prompt_ms"] or 0 for a in answers)
    gen_ms = sum(a["predicted_ms"] or 0 for a in answers)
    return {
        "model": candidate, "context": context, "answers": len(answers),
        "recall_by_id": {a["id"]: a["recall"] for a in answers if a["recall"] is not None},
        "key_fact_recall": float(np.mean(recalls)), "ci_low": low, "ci_high": high,
        "key_fact_precision": float(np.mean(precisions)) if precisions else None, "precision_ci": [p_low, p_high],
        "precision_n": len(precisions),
        **dict(zip(("context_key_facts", "context_length"), context_coverage(candidate, answered, context))),
        "cites": float(np.mean([a["cites"] for a in answers])),
        "cites_source": float(np.mean([a["cites_source"] for a in answers])),
        "tool_calls": len(tools), "well_formed_tool_calls": float(np.mean([t["well_formed"] for t in tools])) if tools else None,
        "prompt_tok_s": 1000 * sum(a["prompt_n"] or 0 for a in answers) / prompt_ms if prompt_ms else None,
        "gen_tok_s": 1000 * sum(a["predicted_n"] or 0 for a in answers) / gen_ms if gen_ms else None,
        "s_per_answer": float(np.mean([a["seconds"] for a in answers])),
        "cpu_s_per_answer": float(np.mean([a["cpu_seconds"] for a in answers])),
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
    return (float(np.mean(deltas)) if deltas else float("nan")), low, high, len(common)


def render(rows: list[dict[str, Any]], seed: int = 0) -> str:
    def f(value: Any, spec: str) -> str:
        return "—" if value is None else format(value, spec)

    lines = ["| model | context | n | key-fact recall [95 % CI] | key-fact precision [95 % CI] (n) | "
             "key facts in context (its length) | cites | cites source PDF | well-formed tool calls | "
             "prompt tok/s | gen tok/s | s/answer (wall) | CPU s/answer | prompt tokens | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        precision = ("—" if r["key_fact_precision"] is None else
                     f"{r['key_fact_precision']:.2f} [{r['precision_ci'][0]:.2f}, {r['precision_ci'][1]:.2f}] ({r['precision_n']})")
        lines.append(f"| {r['model']} | {r['context']} | {r['answers']} | {r['key_fact_recall']:.2f} "
                     f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}] | {precision} | "
                     f"{r['context_key_facts']:.2f} ({r['context_length']:.0%}) | "
                     f"{r['cites']:.0%} | {r['cites_source']:.0%} | "
                     f"{f(r['well_formed_tool_calls'], '.0%')} ({r['tool_calls']}) | {f(r['prompt_tok_s'], '.0f')} | "
                     f"{f(r['gen_tok_s'], '.1f')} | {r['s_per_answer']:.1f} | {f(r.get('cpu_s_per_answer'), '.1f')} | "
                     f"{r['prompt_tokens']:.0f} | {f(r['peak_rss_mb'], '.0f')} |")
    for context in dict.fromkeys(r["context"] for r in rows):
        same = [r for r in rows if r["context"] == context]
        if len(same) > 1:
            lines.append(f"\nPaired ({context} context): recall of {same[0]['model']} minus each other candidate's, on "
                         "the questions both answered (seeded paired bootstrap 95 % CI):\n")
            for r in same[1:]:
                delta, low, high, n = paired_difference(r, same[0], seed)
                lines.append(f"- {r['model']}: {delta:+.2f} [{low:+.2f}, {high:+.2f}] (n = {n})")
    return "\n".join(lines)


def load_subset(args: argparse.Namespace, contexts: list[str]) -> tuple[Path, list[dict[str, Any]]]:
    """The subset file for these inputs, built when missing or on ``--fresh``."""
    inputs = subset_inputs(args.n, args.chunks, args.seed, args.dev, contexts)
    path = subset_path(args.out, inputs)
    if args.fresh and not args.table_only:
        path.unlink(missing_ok=True)
    if not path.is_file():
        if not args.fresh and (source := larger_subset(path, args.n)):
            subset = json.loads(source.read_text())["questions"][:args.n]
        else:
            subset = build_subset(args.n, args.chunks, args.seed, args.dev, contexts)
        path.write_text(json.dumps({"inputs": inputs, "questions": subset}, indent=1))
    return path, json.loads(path.read_text())["questions"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--n", type=int, default=40, help="questions (seeded subset)")
    parser.add_argument("--dev", action="store_true", help="questions of the dev split (for tuning) instead of the rest")
    parser.add_argument("--contexts", default=",".join(CONTEXTS), help="oracle (reference chunks) and/or retrieved")
    parser.add_argument("--tool-calls", type=int, default=10, help="questions for the forced tool-call check")
    parser.add_argument("--chunks", type=int, default=3, help="reference chunks per question")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("runs/offline_models"))
    parser.add_argument("--fresh", action="store_true", help="rebuild the subset and forget cached answers")
    parser.add_argument("--table-only", action="store_true", help="print the table from the cache")
    parser.add_argument("--parallel", action="store_true",
                        help="run the models at the same time (one process each; use with --threads 1)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker-context", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--subset-file", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    contexts = [c.strip() for c in args.contexts.split(",") if c.strip()]
    if unknown := sorted(set(contexts) - set(CONTEXTS)):
        raise SystemExit(f"--contexts: unknown {unknown}; choose from {', '.join(CONTEXTS)}")
    if args.worker:
        subset = json.loads(args.subset_file.read_text())["questions"]
        run_worker(args.worker, args.worker_context, subset, args.out, args.tool_calls, args.threads)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    subset_file, subset = load_subset(args, contexts)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if not args.table_only:
        running = []
        for context in contexts:
            for model in models:
                if args.fresh:
                    cache_path(args.out, model, context).unlink(missing_ok=True)
                command = [sys.executable, __file__, "--worker", model, "--worker-context", context,
                           "--subset-file", str(subset_file), "--tool-calls", str(args.tool_calls), "--out", str(args.out)]
                if args.threads:
                    command += ["--threads", str(args.threads)]
                running.append(subprocess.Popen(command))
                if not args.parallel:
                    running[-1].wait()
        if any(process.wait() != 0 for process in running):
            raise SystemExit("a model's run failed (its answers so far are kept; rerun to resume)")
    rows = [row for context in contexts for model in models if (row := summarise(model, context, subset, args.out, args.seed))]
    table = render(rows, args.seed)
    split = "the dev split" if args.dev else "outside the dev split"
    print(f"\n{DATASET}: {len(subset)} questions {split}, seed {args.seed}; oracle = {args.chunks} reference chunks, "
          f"retrieved = fusion's first 7 ({subset_file.name})\n")
    print(table)
    (args.out / "table.md").write_text(table + "\n")
    (args.out / "summary.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
