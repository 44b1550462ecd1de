"""Index build throughput vs raw embedding throughput of the same chunks, side by side.

    python benchmarks/index_throughput.py [--dataset scifact] [--docs 1000]

Both timings use the same warm embedding model in one process; the build starts from an empty
embedding cache and an empty Qdrant folder, so it pays for everything: loading, chunking,
embedding, sparse vectors, Qdrant upserts, BM25, manifest. The ratio is the build's overhead
over pure embedding (goal ≤ 1.2×).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import tempfile
import time
from pathlib import Path

from rag_lab.config import load_settings
from rag_lab.datasets import resolve_dataset
from rag_lab.index import build_index
from rag_lab.index.store import close_all
from rag_lab.ingest import chunk_documents
from rag_lab.models import get_embed_model


def subset(dataset, docs: int, folder: Path):
    """A BEIR dataset cut to its first ``docs`` documents (folder datasets are used whole)."""
    if dataset.kind != "beir":
        return dataset
    opener = gzip.open if dataset.corpus_file.suffix == ".gz" else open
    with opener(dataset.corpus_file, "rt", encoding="utf-8") as src:
        lines = list(itertools.islice(src, docs))
    (folder / "corpus.jsonl").write_text("".join(lines), encoding="utf-8")
    return resolve_dataset(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="scifact")
    parser.add_argument("--docs", type=int, default=1000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "data").mkdir()
        settings = load_settings(data_dir=tmp / "lab")
        dataset = subset(resolve_dataset(args.dataset, settings.datasets_dir), args.docs, tmp / "data")
        model = get_embed_model(settings)
        model.get_text_embedding("warm up")  # load weights outside both timings

        documents, _ = dataset.load_documents()
        texts = [n.get_content() for n in chunk_documents(documents, settings.chunk_words, settings.chunk_overlap_words)]
        started = time.perf_counter()
        model.get_text_embedding_batch(texts)
        raw_seconds = time.perf_counter() - started

        result = build_index(dataset, settings, progress=False)
        build_seconds = result.seconds
        close_all()

    n = len(texts)
    print(json.dumps({"dataset": args.dataset, "chunks": n}, indent=None))
    print(f"{'':<28}{'seconds':>10}{'chunks/s':>12}")
    print(f"{'raw embedding (same chunks)':<28}{raw_seconds:>10.2f}{n / raw_seconds:>12.1f}")
    print(f"{'full index build':<28}{build_seconds:>10.2f}{n / build_seconds:>12.1f}")
    print(f"overhead ratio (build / raw): {build_seconds / raw_seconds:.3f}×  (goal ≤ 1.2×)")


if __name__ == "__main__":
    main()
