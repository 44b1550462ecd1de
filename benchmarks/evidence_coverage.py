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
the others, each group in fused order), both together. Then :data:`SELECTORS` (benchmarks/evidence_variants.py):
the top units widened by neighbouring lines, the table rows a question names first, rows trimmed to the
asked column, at most two rows a table, character budgets — and ``shipped``, the selection
:func:`rag_lab.answer.evidence.select_evidence` makes, on the same cached scores. A row's ``@k`` is k
units (``k−1 units``: one fewer, the widened lines making up the length; ``budget``: 206 × k characters).
``--per-question out.json`` keeps every row's coverage per question, for paired comparisons.

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
from evidence_variants import (Candidates, better_side_grown, by_budget, figure_lines_grown,  # noqa: E402
                               grow_passages, grown_texts, rows_named_first, rows_per_table, texts_of, trimmed_texts)

from rag_lab.answer.compress import line_scores  # noqa: E402
from rag_lab.answer.evidence import Unit, line_units, pick_units  # noqa: E402
from rag_lab.answer.evidence_order import evidence_order, figures_first, widened, with_chunk_prior  # noqa: E402
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
    legs = {"bm25": ranking("bm25", sparse, dense), "dense": ranking("dense", sparse, dense)}
    return with_chunk_prior(legs, order, [u.doc for u in units], k=10)


def _figures_first(units: list[Unit], order: list[int], sparse: np.ndarray, dense: np.ndarray) -> list[int]:
    return figures_first(order, [u.text for u in units])


def _prior_figures(units: list[Unit], order: list[int], sparse: np.ndarray, dense: np.ndarray) -> list[int]:
    return _figures_first(units, _chunk_prior(units, order, sparse, dense), sparse, dense)


VARIANTS = {
    "+ chunk prior": _chunk_prior,
    "+ figures first": _figures_first,
    "+ chunk prior, figures first": _prior_figures,
}

# Selectors over ``units`` (name → (candidates, k) → the evidence texts): the variants above widened,
# table rows the question names first, rows trimmed to the asked column, character budgets.
# A budget is BUDGET_PER_UNIT × k characters: the base's mean length per unit on dev (1,235 / 6).
BUDGET_PER_UNIT = 206


def _picked(c: Candidates, order: list[int], k: int) -> list[int]:
    return pick_units(c.units, order, k)


def _order(c: Candidates, name: str) -> list[int]:
    orders = {"base": lambda: c.fused,
              "prior+fig": lambda: _prior_figures(c.units, c.fused, c.sparse, c.dense),
              "named": lambda: rows_named_first(c, c.fused),
              "named, siblings kept": lambda: rows_named_first(c, c.fused, demote_siblings=False),
              "prior+fig, named": lambda: rows_named_first(c, _prior_figures(c.units, c.fused, c.sparse, c.dense)),
              "rows/table 2": lambda: rows_per_table(c, c.fused, 2),
              "prior+fig, rows/table 2": lambda: rows_per_table(c, _prior_figures(c.units, c.fused, c.sparse, c.dense), 2),
              "prior+fig, named, rows/table 2":
                  lambda: rows_per_table(c, rows_named_first(c, _prior_figures(c.units, c.fused, c.sparse, c.dense)), 2)}
    return orders[name]()


def _grown(order: str, top: int | None, back: int, ahead: int, by: str = "line", fewer: int = 0,
           prose_only: bool = False):
    return lambda c, k: grown_texts(c, _picked(c, _order(c, order), k - fewer), top if top is not None else k,
                                    back, ahead, by, prose_only)


def _shipped(c: Candidates, k: int) -> list[str]:
    """The selection of :mod:`rag_lab.answer.evidence_order` (measured, not taken) on the cached scores, k−1 units."""
    texts = [u.text for u in c.units]
    legs = {"bm25": ranking("bm25", c.sparse, c.dense), "dense": ranking("dense", c.sparse, c.dense)}
    order = evidence_order(c.question, texts, [u.doc for u in c.units], legs, c.fused, 10)
    picked = pick_units(c.units, order, k - 1)
    spans = widened([(c.units[i].doc - 1, c.units[i].first, c.units[i].last) for i in picked],
                    [texts[i] for i in picked], c.chunks, c.question)
    return [text for _, _, text in spans]


SELECTORS = {
    "evidence_order: prior+fig, named, rows/table 2, k−1 units, top 3 grown ±1 line, named rows not": _shipped,
    "budget: passages -1/+4 lines around the units in fused order, named rows alone":
        lambda c, k: [p.text for p in grow_passages(c.units, c.fused, c.chunks, c.question, BUDGET_PER_UNIT * k)],
    "base, top 3 grown ±1 line": _grown("base", 3, 1, 1),
    "prior+fig, all grown ±1 line": _grown("prior+fig", None, 1, 1),
    "prior+fig, top 3 grown ±1 line": _grown("prior+fig", 3, 1, 1),
    "prior+fig, top 2 grown ±1 line": _grown("prior+fig", 2, 1, 1),
    "prior+fig, top 3 grown ±1 sentence": _grown("prior+fig", 3, 1, 1, by="unit"),
    "prior+fig, top 3 grown 0/+1 line": _grown("prior+fig", 3, 0, 1),
    "prior+fig, k−1 units, top 3 grown ±1 line": _grown("prior+fig", 3, 1, 1, fewer=1),
    "prior+fig, k−1 units, top 2 grown ±1 line": _grown("prior+fig", 2, 1, 1, fewer=1),
    "prior+fig, named, k−1 units, top 3 grown ±1 line": _grown("prior+fig, named", 3, 1, 1, fewer=1),
    "budget: prior+fig, top 3 grown ±1 line": lambda c, k: by_budget(
        c, _order(c, "prior+fig"), BUDGET_PER_UNIT * k, lambda c, picked: grown_texts(c, picked, 3, 1, 1)),
    "prior+fig, grown by neighbouring figure lines":
        lambda c, k: figure_lines_grown(c, _picked(c, _order(c, "prior+fig"), k)),
    "prior+fig, top 3 grown 1 line, the better-ranked side":
        lambda c, k: better_side_grown(c, _picked(c, _order(c, "prior+fig"), k), 3),
    "prior+fig, k−1 units, top 4 grown ±1 line": _grown("prior+fig", 4, 1, 1, fewer=1),
    "prior+fig, named, rows/table 2, k−1 units, top 3 grown ±1 line":
        _grown("prior+fig, named, rows/table 2", 3, 1, 1, fewer=1),
    "prior+fig, k−1 units, top 3 prose grown ±1 line": _grown("prior+fig", 3, 1, 1, fewer=1, prose_only=True),
    "prior+fig, named, rows/table 2, k−1 units, top 3 prose grown ±1 line":
        _grown("prior+fig, named, rows/table 2", 3, 1, 1, fewer=1, prose_only=True),
    "named": lambda c, k: texts_of(c, _picked(c, _order(c, "named"), k)),
    "named, siblings kept": lambda c, k: texts_of(c, _picked(c, _order(c, "named, siblings kept"), k)),
    "named, trimmed": lambda c, k: trimmed_texts(c, _picked(c, _order(c, "named"), k)),
    "budget: base": lambda c, k: by_budget(c, c.fused, BUDGET_PER_UNIT * k, texts_of),
    "budget: base, trimmed": lambda c, k: by_budget(c, c.fused, BUDGET_PER_UNIT * k, trimmed_texts),
    "budget: named, trimmed": lambda c, k: by_budget(c, _order(c, "named"), BUDGET_PER_UNIT * k, trimmed_texts),
    "prior+fig, named": lambda c, k: texts_of(c, _picked(c, _order(c, "prior+fig, named"), k)),
    "prior+fig, named, trimmed": lambda c, k: trimmed_texts(c, _picked(c, _order(c, "prior+fig, named"), k)),
    "budget: prior+fig, named, trimmed":
        lambda c, k: by_budget(c, _order(c, "prior+fig, named"), BUDGET_PER_UNIT * k, trimmed_texts),
    "budget: prior+fig": lambda c, k: by_budget(c, _order(c, "prior+fig"), BUDGET_PER_UNIT * k, texts_of),
    "rows/table 2": lambda c, k: texts_of(c, _picked(c, _order(c, "rows/table 2"), k)),
    "prior+fig, rows/table 2": lambda c, k: texts_of(c, _picked(c, _order(c, "prior+fig, rows/table 2"), k)),
    "prior+fig, named, rows/table 2":
        lambda c, k: texts_of(c, _picked(c, _order(c, "prior+fig, named, rows/table 2"), k)),
    "prior+fig, named, rows/table 2, top 3 grown ±1 line": _grown("prior+fig, named, rows/table 2", 3, 1, 1),
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
    parser.add_argument("--selectors", default=None,
                        help="names of SELECTORS to run, separated by ';' (default: all)")
    parser.add_argument("--per-question", type=Path, default=None,
                        help="a JSON file to write every design's coverage per question ({design: {k: [..]}}), for paired comparisons")
    args = parser.parse_args()
    only = set(args.selectors.split(";")) if args.selectors else None
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
    lengths: dict[tuple[str, str], dict[int, list[int]]] = {}
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
            selections = {scorer: (lambda k, order=order: [units[i].text for i in pick_units(units, order, k, distinct)])
                          for scorer, order in orders.items()}
            if kind == "units":
                candidates = Candidates(item["question"], item["chunks"], units, sparse, dense, orders["rrf10"], tokenizer)
                selections |= {f"rrf10 {name}": (lambda k, select=select: select(candidates, k))
                               for name, select in SELECTORS.items() if not only or name in only}
            for scorer, select in selections.items():
                for k in ks:
                    chosen = select(k)
                    table.setdefault((kind, scorer), {}).setdefault(k, []).append(coverage("\n".join(chosen), item))
                    lengths.setdefault((kind, scorer), {}).setdefault(k, []).append(sum(len(t) for t in chosen))
    if args.per_question:
        args.per_question.write_text(json.dumps({f"{kind} | {scorer}": by_k for (kind, scorer), by_k in table.items()}))
    print(f"{args.dataset} {args.split}: {len(items)} questions with key facts; retriever: {args.config}")
    print(f"ceiling (all lines of the chunks): {ceiling:.3f}   shipped 12-line compression: {shipped:.3f}")
    print("| units | scorer | " + " | ".join(f"coverage@{k}" for k in ks) + " | " + " | ".join(f"chars@{k}" for k in ks) + " |")
    print("|---|---|" + "---|" * (2 * len(ks)))
    for (kind, scorer), by_k in table.items():
        cells = " | ".join(f"{np.mean(by_k[k]):.3f}" for k in ks)
        chars = " | ".join(f"{np.mean(lengths[(kind, scorer)][k]):.0f}" for k in ks)
        print(f"| {kind} | {scorer} | {cells} | {chars} |")


if __name__ == "__main__":
    main()
