"""Evidence selection designs on one split, without an LLM: coverage@k of the selected evidence.

    PYTHONPATH=. python benchmarks/evidence_coverage.py [--split dev] [--config configs/texas_childcare_full.toml]
        [--k 3,5,6,8] [--items items.json] [--embeddings vectors.npz]

For every question of the split whose reference states a key fact the question does not, the chunks
the answer path reads (the recommended configuration's retriever and its first top_k chunks, as
`rag-lab ask --config`) are cut into candidate units (:mod:`rag_lab.answer.evidence`) and each
design selects its best k. Printed: the mean share of the reference's key facts (less the
question's) that the selected evidence states — coverage@k, an upper bound for the answer's
key-fact recall — beside the ceiling (all lines of the chunks) and the shipped 12-line compression,
and the evidence's mean length in characters (the prompt's size).

Designs: the units (``lines``: every line alone; ``units``: table rows with headers and sentence
windows, a text already selected from another chunk skipped; ``units, repeats``: not skipped) × the scorer (``bm25``; ``dense``: the retriever's MiniLM; ``rrf``: both fused by
reciprocal rank, k 10 or 60; ``sum``: min-max scaled scores added).

Selection variants on ``units`` × ``rrf10`` (:data:`VARIANTS`), each a row: ``+ chunk prior`` (a third
RRF leg, weight 0.5, ranking the units by their chunk's retrieval rank, fused order within a chunk: the
first chunk holds most key facts), ``+ figures first`` (units stating a figure — a key fact — before
the others, each group in fused order), both together.

Every distinct unit text is embedded once (the questions' chunks overlap), in batches, and with
``--embeddings`` the vectors are kept in a file written after each batch: a rerun, or an interrupted
run, embeds only what is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compression_sweep import compressed_text, load_items  # noqa: E402

from rag_lab.answer.compress import line_scores  # noqa: E402
from rag_lab.answer.evidence import Unit, line_units, pick_units  # noqa: E402
from rag_lab.fusion.rrf import rrf_fuse  # noqa: E402
from rag_lab.tokenizer import DomainTokenizer  # noqa: E402

SCORERS = ("bm25", "dense", "rrf10", "rrf60", "sum")


def plain_units(chunks: list[list[str]]) -> list[Unit]:
    return [Unit(doc, j, j, line) for doc, lines in enumerate(chunks, start=1) for j, line in enumerate(lines)]


def window_units(chunks: list[list[str]]) -> list[Unit]:
    return [unit for doc, lines in enumerate(chunks, start=1) for unit in line_units(lines, doc)]


def _minmax(values: np.ndarray) -> np.ndarray:
    spread = values.max() - values.min() if len(values) else 0.0
    return (values - values.min()) / spread if spread > 0 else np.zeros_like(values)


def ranking(scorer: str, sparse: np.ndarray, dense: np.ndarray) -> list[int]:
    if scorer == "bm25":
        return [int(i) for i in np.argsort(-sparse, kind="stable")]
    if scorer == "dense":
        return [int(i) for i in np.argsort(-dense, kind="stable")]
    if scorer == "sum":
        return [int(i) for i in np.argsort(-(_minmax(sparse) + _minmax(dense)), kind="stable")]
    legs = {"bm25": [int(i) for i in np.argsort(-sparse, kind="stable")],
            "dense": [int(i) for i in np.argsort(-dense, kind="stable")]}
    return [int(i) for i, _ in rrf_fuse(legs, k=float(scorer.removeprefix("rrf")))]


def _chunk_prior(units: list[Unit], order: list[int], sparse: np.ndarray, dense: np.ndarray) -> list[int]:
    legs = {"bm25": ranking("bm25", sparse, dense), "dense": ranking("dense", sparse, dense),
            "chunk": sorted(order, key=lambda i: units[i].doc)}
    return [int(i) for i, _ in rrf_fuse(legs, k=10, weights={"chunk": 0.5})]


def _figures_first(units: list[Unit], order: list[int], sparse: np.ndarray, dense: np.ndarray) -> list[int]:
    from rag_lab.evaluate.facts.key_facts import extract_key_facts

    stating = {i for i in order if extract_key_facts(units[i].text)}
    return [i for i in order if i in stating] + [i for i in order if i not in stating]


VARIANTS = {
    "+ chunk prior": _chunk_prior,
    "+ figures first": _figures_first,
    "+ chunk prior, figures first": lambda u, o, s, d: _figures_first(u, _chunk_prior(u, o, s, d), s, d),
}

EMBED_BATCH = 256


def load_vectors(path: Path | None) -> dict[str, np.ndarray]:
    if path is None or not path.exists():
        return {}
    data = np.load(path, allow_pickle=False)
    return dict(zip(data["texts"].tolist(), data["vectors"]))


def save_vectors(path: Path, vectors: dict[str, np.ndarray]) -> None:
    texts = list(vectors)
    with path.open("wb") as handle:  # np.savez would append .npz to a name without it
        np.savez(handle, texts=np.array(texts), vectors=np.stack([vectors[t] for t in texts]))


def embed_missing(texts: set[str], vectors: dict[str, np.ndarray], embed_model, path: Path | None) -> None:
    """Embed the texts ``vectors`` lacks (unit-normalised), batch by batch, saving after each batch."""
    missing = sorted(texts - vectors.keys())
    for start in range(0, len(missing), EMBED_BATCH):
        batch = missing[start:start + EMBED_BATCH]
        rows = embed_model.get_text_embedding_batch(batch)
        for text, row in zip(batch, rows):
            row = np.asarray(row, dtype=np.float32)
            vectors[text] = row / (np.linalg.norm(row) or 1.0)
        if path is not None:
            save_vectors(path, vectors)
        print(f"embedded {min(start + EMBED_BATCH, len(missing))}/{len(missing)}", file=sys.stderr, flush=True)


QUERY_PREFIX = "\x00query\x00"


class _Query:
    """``embed_model`` embedding question texts (stored under :data:`QUERY_PREFIX`) as queries."""

    def __init__(self, embed_model):
        self.embed_model = embed_model

    def get_text_embedding_batch(self, texts: list[str]) -> list:
        return [self.embed_model.get_query_embedding(text.removeprefix(QUERY_PREFIX)) for text in texts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="texas_childcare_full")
    parser.add_argument("--split", default="dev", choices=("all", "dev", "rest"))
    parser.add_argument("--config", type=Path, default=Path("configs/texas_childcare_full.toml"))
    parser.add_argument("--k", default="3,5,6,8")
    parser.add_argument("--embeddings", type=Path, default=None,
                        help="an .npz file of unit and question vectors: read when it exists, extended as units are embedded")
    parser.add_argument("--items", type=Path, default=None,
                        help="a JSON file of the retrieved chunks: read when it exists, else written (reruns skip retrieval)")
    args = parser.parse_args()
    from rag_lab.config import load_settings
    from rag_lab.evaluate.facts.key_facts import key_fact_recall
    from rag_lab.models.embeddings import get_embed_model

    if args.items and args.items.exists():
        items = json.loads(args.items.read_text())
    else:
        items = load_items(args.dataset, args.split, args.config)
        if args.items:
            args.items.write_text(json.dumps(items))
    embed_model = get_embed_model(load_settings())
    tokenizer = DomainTokenizer()
    ks = [int(v) for v in args.k.split(",")]

    def coverage(text: str, item: dict) -> float:
        return key_fact_recall(text, item["reference"], item["question"]) or 0.0

    ceiling = np.mean([coverage("\n".join("\n".join(c) for c in item["chunks"]), item) for item in items])
    shipped = np.mean([coverage(compressed_text(item["chunks"], item["question"], 12, "chunk", tokenizer), item)
                       for item in items])
    # "units, repeats": the units without skipping a text already selected from another chunk
    designs = [{"lines": plain_units(item["chunks"]), "units": window_units(item["chunks"])} for item in items]
    designs = [by_kind | {"units, repeats": by_kind["units"]} for by_kind in designs]
    vectors = load_vectors(args.embeddings)
    # questions under a prefix of their own: a question and a unit may share a text but not an embedding
    embed_missing({QUERY_PREFIX + item["question"] for item in items}, vectors, _Query(embed_model), args.embeddings)
    embed_missing({unit.text for units in designs for kind in units.values() for unit in kind},
                  vectors, embed_model, args.embeddings)
    table: dict[tuple[str, str], dict[int, list[float]]] = {}
    lengths: dict[tuple[str, str], list[int]] = {}
    for item, by_kind in zip(items, designs):
        query_vector = vectors[QUERY_PREFIX + item["question"]]
        for kind, units in by_kind.items():
            distinct = kind != "units, repeats"
            texts = [unit.text for unit in units]
            sparse = line_scores(item["question"], texts, tokenizer)
            dense = np.stack([vectors[text] for text in texts]) @ query_vector if texts else np.zeros(0)
            orders = {scorer: ranking(scorer, sparse, dense) for scorer in SCORERS}
            if kind == "units":
                orders |= {f"rrf10 {name}": variant(units, orders["rrf10"], sparse, dense)
                           for name, variant in VARIANTS.items()}
            for scorer, order in orders.items():
                for k in ks:
                    chosen = [units[i] for i in pick_units(units, order, k, distinct)]
                    table.setdefault((kind, scorer), {}).setdefault(k, []).append(
                        coverage("\n".join(u.text for u in chosen), item))
                    if k == max(ks):
                        lengths.setdefault((kind, scorer), []).append(sum(len(u.text) for u in chosen))
    print(f"{args.dataset} {args.split}: {len(items)} questions with key facts; retriever: {args.config}")
    print(f"ceiling (all lines of the chunks): {ceiling:.3f}   shipped 12-line compression: {shipped:.3f}")
    print("| units | scorer | " + " | ".join(f"coverage@{k}" for k in ks) + f" | chars@{max(ks)} |")
    print("|---|---|" + "---|" * (len(ks) + 1))
    for (kind, scorer), by_k in table.items():
        cells = " | ".join(f"{np.mean(by_k[k]):.3f}" for k in ks)
        print(f"| {kind} | {scorer} | {cells} | {np.mean(lengths[(kind, scorer)]):.0f} |")


if __name__ == "__main__":
    main()
