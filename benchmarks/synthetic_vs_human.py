"""Do synthetic questions lead to the same decisions as human ones?

    python benchmarks/synthetic_vs_human.py [--datasets texas_childcare_full,scifact] [--make N]
        [--no-tune] [--out benchmarks/results/synthetic_vs_human.json]
    python benchmarks/synthetic_vs_human.py --label-sample 60      # print the sample to label
    python benchmarks/synthetic_vs_human.py --labels benchmarks/synthetic_labels.jsonl   # its share

Per dataset (``qa.synthetic.jsonl`` as ``rag-lab synth`` wrote it; ``--make N`` runs ``synth --n N``
first, free when its replies are cached):

(a) the rankings the synthetic and the human questions give the four modes (dense, bm25, fusion and
    hybrid at their defaults) and the ablation grid's configurations (``rag-lab ablate``'s default
    grid), by chunk_hit@5 (Q&A folders) or nDCG@10 (BEIR): Kendall τ_b with a bootstrap CI, beside the
    human split-half τ_b at the synthetic set's number of questions (the ceiling);
(b) ``tune --questions synthetic``: chosen on every synthetic question, confirmed on the human rest
    split (all human questions without a declared split) against the default, paired test;
(c) the synthetic set itself: made, candidates, rejections by reason, question↔source overlap beside
    the human questions', LLM seconds per candidate and the time 100 questions take, beside the
    machine's MiniLM embedding speed.
Writes the numbers and the per-configuration means (notebooks/08_synthetic_questions.ipynb plots them).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_lab.config import load_settings  # noqa: E402
from rag_lab.datasets import resolve_dataset  # noqa: E402
from rag_lab.evaluate.ablation.grid import GridSpec  # noqa: E402
from rag_lab.evaluate.ablation.question_sets import compare_question_sets  # noqa: E402
from rag_lab.evaluate.questions.question_set import with_questions  # noqa: E402
from rag_lab.evaluate.questions.records import summary_path  # noqa: E402

DATASETS = ("texas_childcare_full", "scifact")
RUNS = Path("runs/synthetic_vs_human")
LABELS = Path("benchmarks/synthetic_labels.jsonl")


def compare(name: str, settings, spec: GridSpec, do_tune: bool) -> dict:
    from rag_lab.index import build_index

    human = resolve_dataset(name, settings.datasets_dir)
    synthetic = with_questions(human, "synthetic")
    build_index(human, settings, progress=False)
    compared = compare_question_sets(human, synthetic, settings, spec, RUNS / name)
    print(compared.summary())
    result = {"dataset": name, "metric": compared.metric, "n_human": compared.n[0], "n_synthetic": compared.n[1],
              **compared.agreement, "means": compared.means.to_dict(orient="records")}
    if do_tune:
        result["tune"] = tuned_on_synthetic(synthetic, settings, RUNS / name / "tune")
    result["synth"] = synth_summary(synthetic)
    return result


def tuned_on_synthetic(synthetic, settings, out: Path) -> dict:
    from rag_lab.evaluate.tune import tune

    started = time.perf_counter()
    result = tune(synthetic, settings, out, progress=False, force=True)
    c = result.confirmation
    return {"split": result.split_note, "chosen": result.selection.chosen.config.id,
            "against": c.against.config.id, "n_confirm": c.n, "chosen_mean": round(c.chosen.mean, 4),
            "default_mean": round(c.against.mean, 4), "delta": round(c.delta, 4),
            "delta_ci": [round(x, 4) for x in c.delta_ci], "p_value": c.p_value, "significant": c.significant,
            "seconds": round(time.perf_counter() - started, 1)}


def synth_summary(synthetic) -> dict:
    summary = json.loads(summary_path(synthetic.qa_file).read_text())
    candidates = summary["candidates"] or 1
    per_candidate = (summary["llm_seconds"] + summary.get("cached_replies_seconds", 0.0)) / candidates
    per_question = per_candidate * candidates / max(summary["made"], 1)
    return {**{k: summary[k] for k in ("made", "candidates", "rejected", "kinds_kept", "overlap", "generator")},
            "llm_seconds_per_candidate": round(per_candidate, 1),
            "minutes_per_100_questions": round(per_question * 100 / 60, 1)}


def minilm_chunks_per_second(settings, n: int = 64) -> float:
    """The machine's reference figure: MiniLM embeddings of 100-word passages per second."""
    from rag_lab.models.embeddings import get_embed_model

    model = get_embed_model(settings)
    texts = [" ".join(f"word{i}-{j}" for j in range(100)) for i in range(n)]
    model.get_text_embedding_batch(texts[:8])
    started = time.perf_counter()
    model.get_text_embedding_batch(texts)
    return round(n / (time.perf_counter() - started), 1)


def label_sample(k: int, settings) -> list[dict]:
    """Up to ``k`` accepted synthetic questions, seeded, half from each dataset, with their source chunk."""
    from rag_lab.evaluate.questions.sampling import corpus_chunks

    picked = []
    for name in DATASETS:
        dataset = with_questions(resolve_dataset(name, settings.datasets_dir), "synthetic")
        lines = [json.loads(x) for x in dataset.qa_file.read_text().splitlines() if x.strip()]
        chunks = {c.chunk_id: c.text for c in corpus_chunks(dataset, settings)}
        for line in random.Random(0).sample(lines, min(len(lines), k // len(DATASETS))):
            picked.append({**line, "dataset": name, "chunk": chunks.get(line["source_chunk"], "")})
    return picked


def labelled_share(path: Path) -> dict:
    labels = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    n, ok = len(labels), sum(bool(label["acceptable"]) for label in labels)
    z = 1.959964
    centre = (ok + z * z / 2) / (n + z * z)
    half = z * math.sqrt(ok * (n - ok) / n + z * z / 4) / (n + z * z) if n else 0.0
    fails: dict[str, int] = {}
    for label in labels:
        for rule in label.get("fails", []):
            fails[str(rule)] = fails.get(str(rule), 0) + 1
    return {"n": n, "acceptable": ok, "share": round(ok / n, 3) if n else None,
            "wilson95": [round(centre - half, 3), round(centre + half, 3)], "fails_by_rule": fails}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--make", type=int, default=None, metavar="N", help="run synth --n N first (cached)")
    parser.add_argument("--no-tune", action="store_true")
    parser.add_argument("--label-sample", type=int, default=None, metavar="K")
    parser.add_argument("--labels", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/synthetic_vs_human.json"))
    args = parser.parse_args()
    settings = load_settings()
    if args.label_sample:
        for i, item in enumerate(label_sample(args.label_sample, settings), 1):
            print(json.dumps({"n": i, **{k: item[k] for k in ("id", "dataset", "kind", "question", "reference_answer",
                                                               "source_file", "chunk")}}, ensure_ascii=False))
        return 0
    if args.labels:
        print(json.dumps(labelled_share(args.labels), indent=2))
        return 0
    results = {"machine": {"minilm_chunks_per_s": minilm_chunks_per_second(settings)}, "datasets": []}
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        if args.make:
            from rag_lab.evaluate.questions import synth

            synth(resolve_dataset(name, settings.datasets_dir), settings, n=args.make)
        results["datasets"].append(compare(name, settings, GridSpec(), not args.no_tune))
        print(json.dumps({k: v for k, v in results["datasets"][-1].items() if k != "means"}, indent=2))
    if LABELS.exists():
        results["labels"] = labelled_share(LABELS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}; machine: MiniLM {results['machine']['minilm_chunks_per_s']} chunks/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
