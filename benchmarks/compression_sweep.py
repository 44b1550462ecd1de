"""Compression settings on one split, without an LLM: how many of the reference's key facts survive.

    PYTHONPATH=. python benchmarks/compression_sweep.py [--split dev] [--lines 4,8,12,16,24] [--json out.json]

For every question of the split whose reference states a key fact the question does not, the chunks
the local answer path gives the model (fusion, the engine's DEFAULT_TOP_K candidates, the first
DEFAULT_TOP_N, no rerank: `rag-lab ask`/`eval` with the local model) are compressed
(:mod:`rag_lab.answer.compress`) under each setting, and the script prints the mean share of the
reference's key facts (less the question's) that the compressed context still states — an upper
bound for the answer's key-fact recall — and the share of the chunks' characters kept (the prompt's
size). Settings: lines kept (``RAG_LAB_COMPRESS_LINES``) × table grouping:

- ``chunk``: a table is one caption within one chunk (the shipped rule, r2);
- ``caption``: one caption over all chunks (r1: two years' pages of one table compete);
- ``none``: table rows are scored like prose lines (no per-table best rows).

The chosen setting is then checked with answers from the local LLM (`rag-lab ablate … --answer-configs`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from rag_lab.answer.compress import ELLIPSIS, _lines, line_scores, project_row, select_lines
from rag_lab.ingest.tables import parse_row
from rag_lab.tokenizer import DomainTokenizer

GROUPINGS = ("chunk", "caption", "none")


def compressed_text(chunks: list[list[str]], query: str, max_lines: int, grouping: str,
                    tokenizer: DomainTokenizer, max_tied_rows: int | None | str = "default") -> str:
    """:func:`rag_lab.answer.compress.compress_nodes`'s text, with the table grouping as a setting."""
    flat = [(i, j, line) for i, lines in enumerate(chunks) for j, line in enumerate(lines)]
    texts = [line for _, _, line in flat]
    scores = line_scores(query, texts, tokenizer) if flat else np.zeros(0)
    rows = [parse_row(line) for line in texts]
    if grouping == "chunk":
        tables = [(i, row[0][0] if len(row[0]) > 1 else "") if row else None for (i, _, _), row in zip(flat, rows)]
    elif grouping == "caption":
        tables = [(row[0][0] if len(row[0]) > 1 else "") if row else None for row in rows]
    else:
        tables = [None] * len(flat)
    keep = {(flat[k][0], flat[k][1]) for k in select_lines(scores, tables, [i for i, _, _ in flat], max_lines, max_tied_rows)}
    terms = set(tokenizer(query))
    parts: list[str] = []
    for i, lines in enumerate(chunks):
        kept: list[str] = []
        for j, line in enumerate(lines):
            if j == 0 or (i, j) in keep:
                kept.append(project_row(line, terms, tokenizer))
            elif kept[-1] != ELLIPSIS:
                kept.append(ELLIPSIS)
        parts.append("\n".join(kept))
    return "\n\n".join(parts)


def _tied(value: str) -> int | None | str:
    return value if value == "default" else None if value == "none" else int(value)


def load_items(dataset_name: str, split: str, config_path: Path | None = None) -> list[dict]:
    from rag_lab.answer.engine import DEFAULT_TOP_K
    from rag_lab.answer.rerank import DEFAULT_TOP_N
    from rag_lab.config import load_settings
    from rag_lab.datasets import resolve_dataset
    from rag_lab.evaluate.facts.key_facts import has_key_facts
    from rag_lab.retrieve import build_retriever
    from rag_lab.splits import select_split

    settings = load_settings()
    dataset = resolve_dataset(dataset_name, settings.datasets_dir)
    pairs = {p.id: p for p in dataset.load_qa()}
    ids = select_split(list(pairs), dataset.dev_split, split, dataset.name)
    mode, params, top_k, top_n = "fusion", {}, DEFAULT_TOP_K, DEFAULT_TOP_N
    if config_path is not None:  # a recommended configuration (rag-lab tune): its retriever, its first top_n chunks
        from rag_lab.retrieve.tuned_config import read_tuned_config

        config = read_tuned_config(config_path)
        mode, params, top_k = config.mode, config.retrieval_params(), config.top_k
        top_n = config.top_n or DEFAULT_TOP_N
    retriever = build_retriever(mode, settings, dataset, top_k=top_k, **params)
    items = []
    for qid in ids:
        pair = pairs[qid]
        if not pair.reference_answer or not has_key_facts(pair.reference_answer, pair.question):
            continue
        nodes = retriever.retrieve(pair.question)[:top_n]
        items.append({"id": qid, "question": pair.question, "reference": pair.reference_answer,
                      "chunks": [_lines(n) for n in nodes]})
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare_full")
    parser.add_argument("--split", default="dev", choices=("all", "dev", "rest"))
    parser.add_argument("--lines", default="4,8,12,16,24")
    parser.add_argument("--groupings", default=",".join(GROUPINGS))
    parser.add_argument("--tied-rows", default="default",
                        help="MAX_TIED_ROWS values (rag_lab.answer.compress) to try, 'none' = no limit (default: the shipped one)")
    parser.add_argument("--config", type=Path, default=None, help="retrieve with a recommended configuration file")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    from rag_lab.evaluate.facts.key_facts import key_fact_recall

    items = load_items(args.dataset, args.split, args.config)
    tokenizer = DomainTokenizer()
    whole = [sum(len(line) for lines in item["chunks"] for line in lines) or 1 for item in items]
    full = [key_fact_recall("\n".join("\n".join(c) for c in item["chunks"]), item["reference"], item["question"]) or 0.0
            for item in items]
    rows = [{"lines": None, "grouping": "whole chunks", "tied_rows": None, "key_facts_kept": float(np.mean(full)),
             "length": 1.0}]
    for grouping in args.groupings.split(","):
        for lines in (int(v) for v in args.lines.split(",")):
            for tied in (_tied(v) for v in args.tied_rows.split(",")):
                shares, lengths = [], []
                for item, size in zip(items, whole):
                    text = compressed_text(item["chunks"], item["question"], lines, grouping, tokenizer, tied)
                    shares.append(key_fact_recall(text, item["reference"], item["question"]) or 0.0)
                    lengths.append(len(text.replace("\n", "")) / size)
                rows.append({"lines": lines, "grouping": grouping, "tied_rows": str(tied),
                             "key_facts_kept": float(np.mean(shares)), "length": float(np.mean(lengths))})
    source = f"--config {args.config}" if args.config else "fusion, first 7 of 30 chunks"
    print(f"{args.dataset} {args.split}: {len(items)} questions with key facts; {source}")
    print(f"{'grouping':<14}{'lines':>6}{'tied rows':>10}{'key facts kept':>16}{'length kept':>13}")
    for row in rows:
        print(f"{row['grouping']:<14}{row['lines'] or '—':>6}{row['tied_rows'] or '—':>10}{row['key_facts_kept']:>16.3f}{row['length']:>13.3f}")
    if args.json:
        args.json.write_text(json.dumps({"split": args.split, "questions": [i["id"] for i in items], "rows": rows},
                                        indent=2))


if __name__ == "__main__":
    main()
