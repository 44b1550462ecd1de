"""Build ``datasets/texas_childcare_full/judge_validation.jsonl`` (the rule:
:mod:`benchmarks.judge_labels.validation_set` and the dataset's PROVENANCE.md).

    python benchmarks/build_judge_validation.py [--check]

Deterministic: the same Q&A pairs, dev split and PDFs give the same file byte for byte. ``--check``
rebuilds in memory and fails when the committed file differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATASET = "texas_childcare_full"
OUT_NAME = "judge_validation.jsonl"


def build(root: Path, chunk_words: int, cache_dir: Path | None = None) -> list[dict]:
    """The set's items; ``cache_dir``: parsed PDFs are read from (and added to) its ``parsed.sqlite``,
    as index builds do (a parse is keyed by the file's hash: the same text as a fresh parse)."""
    from contextlib import nullcontext

    from rag_lab.datasets import resolve_dataset
    from benchmarks.judge_labels.validation_set import (MAX_CHUNKS, Support, build_item, eligible_pairs,
                                                       pick_contexts, reference_sentences)
    from rag_lab.ingest.chunking import chunk_documents
    from rag_lab.ingest.loaders import load_folder
    from rag_lab.ingest.parse_cache import ParseCache
    from rag_lab.tokenizer import iter_terms

    dataset = resolve_dataset(root)
    pairs = [json.loads(line) for line in (root / "qa.jsonl").read_text().splitlines() if line.strip()]
    pdf_dir = root / "pdfs"
    pairs = eligible_pairs(pairs, dataset.dev_split, {p.name for p in pdf_dir.iterdir()})
    needed = sorted({p["source_file"] for p in pairs})
    with ParseCache(cache_dir / "parsed.sqlite") if cache_dir is not None else nullcontext() as parse_cache:
        documents, _ = load_folder(pdf_dir, parse_cache=parse_cache)
    chunks: dict[str, list] = {name: [] for name in needed}
    for node in chunk_documents([d for d in documents if d.metadata["filename"] in chunks], chunk_words=chunk_words):
        words = {t.text for t in iter_terms(node.text)}
        chunks[node.metadata["filename"]].append((node.text, Support.of(node.text), words, node.metadata.get("page")))
    items = []
    for pair in pairs:
        candidates = chunks[pair["source_file"]]
        q_words = {t.text for t in iter_terms(pair["question"])}
        picked = pick_contexts(reference_sentences(pair["reference_answer"]), q_words,
                               [(support, words) for _, support, words, _ in candidates], MAX_CHUNKS)
        contexts = [{"text": candidates[i][0], "filename": pair["source_file"], "page": candidates[i][3]}
                    for i in picked]
        if picked and (item := build_item(pair, contexts)) is not None:
            items.append(item)
    # the negated and swapped-entity answers: the swap's names come from every item's contexts
    from benchmarks.judge_labels.validation_kinds import add_hard_kinds

    return add_hard_kinds(items)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the committed file is not what the rule gives")
    args = parser.parse_args()
    from rag_lab.config import get_settings

    root = Path("datasets") / DATASET
    settings = get_settings()
    items = build(root, settings.chunk_words, settings.cache_dir)
    text = "".join(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n" for item in items)
    out = root / OUT_NAME
    if args.check:
        same = out.is_file() and out.read_text(encoding="utf-8") == text
        print(f"{out}: {'up to date' if same else 'DIFFERS from the rule'} ({len(items)} questions)")
        return 0 if same else 1
    out.write_text(text, encoding="utf-8")
    counts = {}
    for item in items:
        kind = item["answers"][1]["change"]["kind"]
        counts[kind] = counts.get(kind, 0) + 1
    print(f"wrote {out}: {len(items)} questions, changed fact by kind {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
