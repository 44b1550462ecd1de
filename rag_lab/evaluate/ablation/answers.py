"""Answer-level metrics for a chosen subset of ablation configurations (``--answer-configs``).

Each configuration's fused chunks (from the grid, no new retrieval) go to the project's cited
query engine through a retriever that returns exactly those chunks. An answer is generated once
per distinct context — (question, chunk ids in order, the chunks' text, the generator: model,
prompt version, compression, max tokens, temperature) — and kept in ``answers.jsonl`` of the run
folder (appended as each is done, so an interrupted run resumes and a rerun generates nothing).
Configurations that hand the generator the same chunks share one answer.

Scored without an LLM: key-fact recall of the reference answer (numbers, amounts, codes), and
whether the answer cites a relevant source file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from rag_lab.evaluate.ablation.checkpoint import append_record, read_records
from rag_lab.evaluate.ablation.grid import Config, GridResult, GridSpec

ANSWERS_FILE = "answers.jsonl"
DEFAULT_ANSWER_TOP_K = (3, 5, 7)


class FixedRetriever(BaseRetriever):
    """Returns the given nodes for any query (the grid already decided what is retrieved)."""

    def __init__(self, nodes: list[NodeWithScore]) -> None:
        self.nodes = nodes
        super().__init__()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return list(self.nodes)


def parse_answer_configs(text: str | None, spec: GridSpec) -> list[Config]:
    """``None`` → top-k 3/5/7 at the default k and prefetch, every mode; else comma-separated
    config ids as printed in results.csv (``hybrid|k=60|p=100|w=1:1|top=5``) or bare top-k values."""
    if not text:
        return [spec.baseline(m, t) for m in spec.modes for t in DEFAULT_ANSWER_TOP_K]
    by_id = {c.id: c for c in spec.configs()}
    configs = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part.isdigit():
            configs += [spec.baseline(m, int(part)) for m in spec.modes]
        elif part in by_id:
            configs.append(by_id[part])
        else:
            raise ValueError(f"--answer-configs {part!r} is neither a top-k nor a configuration of the grid "
                             "(e.g. 5 or hybrid|k=60|p=100|w=1:1|top=5)")
    return list(dict.fromkeys(configs))


def context_key(question: str, chunks: Sequence[str], generator: str = "", texts: Sequence[str] = ()) -> str:
    """One answer per (question, chunks in order, their text, generator): another model, prompt,
    compression, max tokens or temperature — or an index rebuild that kept a chunk's id but changed
    its text — generates anew instead of reusing another context's answers."""
    texts_hash = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    return hashlib.sha256(json.dumps([question, list(chunks), generator, texts_hash]).encode()).hexdigest()[:20]


def generator_id(settings, llm=None, engine_params: dict | None = None, model: str | None = None) -> str:
    """Everything about the generator an answer depends on besides its context (``model``: its
    identity as the study's plan resolved it; else resolved here)."""
    from rag_lab.evaluate.plan.answering import answer_style_input, context_window_input, model_id, prompt_version

    sampling = {"max_tokens": settings.llm_max_tokens, "temperature": settings.llm_temperature,
                **context_window_input(settings), **answer_style_input(settings)}
    if llm is not None:  # an LLM object passed in samples with its own settings (its identity holds its window)
        sampling = {"max_tokens": getattr(llm, "max_tokens", None), "temperature": getattr(llm, "temperature", None)}
    return json.dumps([model or model_id(settings, llm=llm), prompt_version(), settings.context_lines, sampling,
                       engine_params or {}], sort_keys=True, default=str)


def chunk_nodes(index, chunk_ids) -> dict:
    """Chunk id → its node as stored in the index (one payload fetch, any vector backend)."""
    from llama_index.core.vector_stores.utils import metadata_dict_to_node

    ids = list(dict.fromkeys(chunk_ids))
    return {c: metadata_dict_to_node(p) for c, p in (index.vectors.payloads(ids) if ids else {}).items()}


def chunk_text(node) -> str:
    """What the generator sees of a chunk: its text and the metadata shown to the LLM."""
    from llama_index.core.schema import MetadataMode

    return node.get_content(metadata_mode=MetadataMode.LLM)


def _chunks_for(grid: GridResult, config: Config, qid: str) -> tuple[str, ...]:
    if config.id in grid.chunks:
        return grid.chunks[config.id][qid]
    longest = replace(config, top_k=max(grid.spec.top_k))
    if config.top_k > longest.top_k:
        raise ValueError(f"answer configuration top-k {config.top_k} exceeds the grid's largest top-k {longest.top_k}")
    return grid.chunks[longest.id][qid][: config.top_k]


def generate_answers(index, settings, grid: GridResult, configs: list[Config], queries: dict[str, str],
                     run_dir: Path, qids: Sequence[str], progress: bool = True, llm=None, concurrency: int = 1,
                     generator: str | None = None, **engine_params):
    """Answers for ``configs`` × ``qids``; returns one record per (config, question).

    ``concurrency`` answers are in flight at once (:func:`rag_lab.schedule.run_in_flight`):
    only this thread appends to ``answers.jsonl`` (one fsynced line per answer, in the order they
    finish), so a kill loses at most those in flight and the next run generates exactly them.
    ``generator``: the answering model's identity from the study's plan (:mod:`..plan.study_plan`)."""
    from rag_lab.schedule import run_in_flight
    from rag_lab.progress import progress_bar

    generator = generator_id(settings, llm, engine_params, model=generator)
    path = Path(run_dir) / ANSWERS_FILE
    done = {r["context"]: r for r in read_records(path, "answers", ("context", "answer"))}
    contexts = {(config.id, qid): _chunks_for(grid, config, qid) for config in configs for qid in qids}
    nodes = chunk_nodes(index, [c for chunks in contexts.values() for c in chunks])
    keys, wanted = {}, {}
    for (config_id, qid), chunks in contexts.items():
        texts = [chunk_text(nodes[c]) if c in nodes else "" for c in chunks]
        key = keys[(config_id, qid)] = context_key(queries[qid], chunks, generator, texts)
        wanted.setdefault(key, (qid, chunks))
    todo = [(key, qid, chunks) for key, (qid, chunks) in wanted.items() if key not in done]
    if todo:
        if llm is None:  # one LLM (one SDK client, or the model loaded once) for every answer
            from rag_lab.models.llm import get_llm

            llm = get_llm(settings)

        def answer(item) -> dict:
            key, qid, chunks = item
            return _answer(key, qid, chunks, queries[qid], nodes, settings, llm, engine_params)

        def write(record: dict) -> None:
            append_record(handle, record, durable=True)
            done[record["context"]] = record

        with path.open("a", encoding="utf-8") as handle, \
                progress_bar(total=len(todo), desc="answers", unit="answer", enabled=progress) as bar:
            run_in_flight(todo, answer, write, concurrency=concurrency, on_done=bar.update)
    return [{"config": config_id, **done[keys[(config_id, qid)]]} for (config_id, qid) in contexts]


def _answer(key: str, qid: str, chunks, question: str, nodes: dict, settings, llm, engine_params: dict) -> dict:
    """One generation over exactly ``chunks`` (in a worker thread: its own engine, the shared LLM)."""
    from rag_lab.answer.adapter import AnswerPipeline
    from rag_lab.answer.engine import build_engine

    found = [NodeWithScore(node=nodes[c], score=1.0 / (i + 1)) for i, c in enumerate(chunks) if c in nodes]
    engine = build_engine("fusion", settings, retriever=FixedRetriever(found), rerank=False, llm=llm,
                          top_k=max(len(found), 1), top_n=max(len(found), 1), **engine_params)
    answer = AnswerPipeline(engine, mode="ablation").query(question)
    return {"context": key, "qid": qid, "chunks": list(chunks), "answer": answer.answer,
            "cited": [s.doc for s in answer.cited_sources], "retrieved": [s.doc for s in answer.retrieved_sources],
            "latency_s": answer.response_time, "usage": dict(answer.usage)}


def answers_frame(rows: list[dict], qa_by_id: dict, qrels: dict):
    """Tidy answer rows with key-fact recall and precision (the question's facts left out) and
    cited-source correctness."""
    import pandas as pd

    from rag_lab.evaluate.facts.key_facts import key_fact_precision, key_fact_recall

    out = []
    for row in rows:
        pair = qa_by_id.get(row["qid"])
        reference = pair.reference_answer if pair is not None else None
        relevant = set(qrels.get(row["qid"], {}))
        usage = row.get("usage") or {}
        out.append({
            "config": row["config"], "qid": row["qid"], "question": pair.question if pair else "",
            "answer": row["answer"], "cited": row["cited"], "retrieved": row["retrieved"],
            "key_fact_recall": key_fact_recall(row["answer"], reference, pair.question) if reference else None,
            "key_fact_precision": key_fact_precision(row["answer"], reference, pair.question) if reference else None,
            "cites_relevant": bool(relevant & set(row["cited"])) if row["cited"] else False,
            "latency_s": row["latency_s"], "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
        })
    return pd.DataFrame(out)
