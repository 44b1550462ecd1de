"""Verdicts by probability, with evidence first and numbers checked by code.

RAGAS asks one generated JSON reply of verdicts and reasons for all statements; a 1.5B judge gives
0/1 verdicts that tie and costs a minute per call. ``ProbabilityNLIPrompt`` replaces the metric's
NLI prompt: for each statement, code picks its evidence (:mod:`evidence`), code checks its numbers
(:mod:`numeric`: a value no context states decides "unsupported"; or, stricter, a value the chosen
passages do not state), and otherwise the
local model is asked "Yes" or "No" about that short (premise, statement) pair as one constrained
token; the verdict is P(Yes) / (P(Yes) + P(No)) read from llama.cpp's log-probabilities of that
token. One short forward pass per statement, no reason generated.

The verdicts are floats in [0, 1]; :func:`use_probability_verdicts` makes the metric score them
as probabilities: faithfulness = P(every statement supported), the product of the verdicts
(``faithfulness_score="all"``; "share": RAGAS's ratio taken as an expectation, the mean); factual correctness = precision/recall/F1 with soft counts (tp = Σ p, fp = Σ (1 − p),
fn = Σ (1 − q)). The 0.5 cut of the same verdicts is RAGAS's ratio (recorded beside each verdict in
the judge's transcript: ``cut_score``).
"""

from __future__ import annotations

import math
import threading
import time
from types import MethodType
from typing import Any

import numpy as np
from ragas.metrics._faithfulness import (NLIStatementInput, NLIStatementOutput, NLIStatementPrompt,
                                         StatementFaithfulnessAnswer)

from rag_lab.evaluate.judge.evidence import DEFAULT_EVIDENCE_PASSAGES, evidence_text, whole_text
from rag_lab.evaluate.judge.numeric import missing_values
from rag_lab.evaluate.judge.versions import stamp, version_of

# The instruction and examples come first, the same for every call: llama.cpp's prompt cache keeps
# their tokens, so a verdict costs only the premise and statement (≈ 60–250 tokens).
INSTRUCTION = (
    "Check whether the statement is supported by the premise. Answer Yes only if the premise says what the "
    "statement says: the same numbers, dates, names, programs and documents, and the same meaning. A statement "
    "that negates the premise, names another board, program or document, or adds facts the premise does not "
    "state is answered No.\n\n"
    "Premise: Admission | Adults: $12 | Children under 12: free\nStatement: Adult admission costs $15.\nAnswer: No\n\n"
    "Premise: The museum opened in 1998 and is run by the city.\nStatement: The city runs the museum.\nAnswer: Yes\n\n"
    "Premise: Providers must renew the permit every year.\nStatement: Providers do not need to renew the permit.\n"
    "Answer: No\n\n"
    "Premise: Applications are reviewed by the Harris County board.\nStatement: Applications are reviewed by the "
    "Dallas County board.\nAnswer: No\n\n"
    "Premise: A family of four qualifies with an income below 85% of the state median.\nStatement: Families of "
    "four earning under 85 percent of the state median income are eligible.\nAnswer: Yes\n\n")
QUESTION = "Premise: {premise}\nStatement: {statement}\nAnswer:"
VERDICT_GRAMMAR = 'root ::= "Yes" | "No"'
TOP_LOGPROBS = 20
# A token absent from the top list had at most the smallest listed probability: this floor stands in.
ABSENT_LOGPROB = -20.0


# The premise of the contrastive verdict's second question: what the model believes of the statement alone.
NO_PREMISE = "(none)"


def contrast(p: float, p_alone: float) -> float:
    """P(yes) with the premise against P(yes) without it, as a probability: sigmoid(logit p − logit p_alone).
    0.5 when the premise does not move the model; above when it supports, below when it refutes."""
    clip = (lambda q: min(max(q, 1e-6), 1 - 1e-6))
    logit = (lambda q: math.log(clip(q) / (1 - clip(q))))
    return 1 / (1 + math.exp(-(logit(p) - logit(p_alone))))


def premise_sha(text: str) -> str:
    """Names the premise of a transcript entry (factual correctness verifies against two)."""
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:12]


def yes_probability(top_logprobs: list[dict[str, Any]]) -> float:
    """P(Yes) / (P(Yes) + P(No)) from one token's top log-probabilities ("Yes", " yes", "YES" … count
    as Yes); a side missing from the list gets the list's smallest probability (or ``ABSENT_LOGPROB``)."""
    floor = min((entry["logprob"] for entry in top_logprobs), default=ABSENT_LOGPROB)
    mass = {"yes": 0.0, "no": 0.0}
    for entry in top_logprobs:
        word = str(entry.get("token", "")).strip().lower()
        if word in mass:
            mass[word] += math.exp(entry["logprob"])
    yes = mass["yes"] or math.exp(floor)
    no = mass["no"] or math.exp(floor)
    return yes / (yes + no)


def ask_verdict(llm: Any, premise: str, statement: str) -> tuple[float, dict[str, int]]:
    """The local model's P(supported) for (premise, statement), and the call's token counts."""
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    prompt = INSTRUCTION + QUESTION.format(premise=premise, statement=statement)
    response = llm.chat([ChatMessage(role=MessageRole.USER, content=prompt)], max_tokens=1, temperature=0.0,
                        grammar=VERDICT_GRAMMAR, logprobs=True, top_logprobs=TOP_LOGPROBS)
    raw = response.raw or {}
    content = ((raw.get("choices") or [{}])[0].get("logprobs") or {}).get("content") or []
    if not content:
        raise ValueError("the local model returned no log-probabilities (logprobs unsupported?)")
    usage = raw.get("usage") or {}
    return yes_probability(content[0].get("top_logprobs") or []), {
        "prompt_tokens": int(usage.get("prompt_tokens") or 0), "completion_tokens": int(usage.get("completion_tokens") or 0)}


class ProbabilityNLIPrompt(NLIStatementPrompt):
    """RAGAS's NLI prompt answered statement by statement with a probability (see the module).

    ``evidence``: passages chosen per statement (0: the whole context is the premise); ``numbers``:
    whether the numeric rule decides first. Both are in ``design`` (the cache key)."""

    version = version_of("verdict")
    # the model's verdict depends on the prompt text, the premise and the statement only: the verdict store
    # keys on this, not on ``version`` (a changed rule reuses the model's verdicts)
    verdict_version = version_of("model_verdict")

    def __init__(self, evidence: int = DEFAULT_EVIDENCE_PASSAGES, numbers: bool | str = True,
                 store: Any = None, negation: bool = False, names: bool = False, verbatim: bool = False,
                 claims_evidence: str = "passages", contrastive: bool = False, cells: bool = False,
                 faithfulness_score: str = "share") -> None:
        super().__init__()
        self.evidence = evidence
        # True / "code": a value no context states decides; "evidence": a value the chosen passages do not
        # state decides (stricter); False / "off": the model decides every statement
        numbers = {True: "code", False: "off"}.get(numbers, numbers) if isinstance(numbers, bool) else numbers
        self.numbers = numbers
        # a DiskCache of the model's verdicts by (model, prompt text, premise, statement): shared by every
        # metric and option set asking the same pair (the lever combinations differ in few pairs)
        self.store = store
        self.negation, self.names = negation, names  # the rules of :mod:`rules`
        self.verbatim = verbatim  # :mod:`verbatim`: a word-for-word copy of a context is stated
        self.cells = cells  # :mod:`table_cells`: a figure from another row or column of a table is not stated
        # faithfulness from the verdicts: the expected share of stated statements ("share", RAGAS's ratio)
        # or the probability that every statement is stated ("all": their product)
        self.faithfulness_score = faithfulness_score
        # factual correctness's premise: each claim's best passages ("passages") or the whole other text ("whole")
        self.claims_evidence = claims_evidence
        # P(yes) contrasted with the model's P(yes) for the statement without a premise (:func:`contrast`)
        self.contrastive = contrastive
        self.rules = ("verdict", "model_verdict", "evidence") + ("numbers",) * (numbers != "off") \
            + ("negation",) * bool(negation) + ("names",) * bool(names) + ("verbatim",) * bool(verbatim) \
            + ("cells",) * bool(cells)
        self.design = (f"{self.version}:evidence={evidence}:numbers={numbers}"
                       + (":negation" if negation else "") + (":names" if names else "")
                       + (":verbatim" if verbatim else "") + (":cells" if cells else "") + (":whole-claims-premise" if claims_evidence == "whole" else "")
                       + (":contrastive" if contrastive else "") + (":all" if faithfulness_score == "all" else "")
                       + ":" + ",".join(version_of(rule) for rule in self.rules))
        self.instruction = INSTRUCTION + QUESTION  # what the cache key hashes: the text the model reads
        self._verdicts: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def verdict(self, judge: Any, context: str, statement: str, question: str = "") -> dict[str, Any]:
        """One statement's record: evidence, the rule that decided ("verbatim", "numbers", "negation", "names" or
        "model"), p.

        ``question``: the question ``context`` answers (factual correctness: the answer or the
        reference). Its terms count as stated ("$4,106" answers "the limit for a family of 5 in BCY
        2026?": the 5 and the 2026 need not be repeated), and the model reads it before the evidence."""
        premise = (whole_text(context) if question and self.claims_evidence == "whole"
                   else evidence_text(statement, context, self.evidence))
        # the whole context too: the numbers and names rules read it, not only the premise
        key = (context, premise, statement, question)
        with self._lock:
            if key in self._verdicts:
                return dict(self._verdicts[key])
        checked = {"code": context, "evidence": premise}.get(self.numbers)
        missing = missing_values(statement, f"{checked}\n{question}") if checked is not None else []
        from rag_lab.evaluate.judge.rules import negation_mismatch, unstated_names

        negated = self.negation and negation_mismatch(statement, premise)  # the evidence's words, not the question's
        if question:
            premise = f"Question: {question}\nAnswer: {premise}"
        record: dict[str, Any] = {"statement": statement, "evidence": premise}
        names = unstated_names(statement, f"{context}\n{question}") if self.names else []
        from rag_lab.evaluate.judge.table_cells import misplaced_figures

        misplaced = misplaced_figures(statement, context) if self.cells else []
        from rag_lab.evaluate.judge.verbatim import copied_from

        if self.verbatim and copied_from(statement, context):
            record |= {"rule": "verbatim", "p": 1.0}
        elif missing:
            record |= {"rule": "numbers", "missing": missing, "p": 0.0}
        elif misplaced:
            record |= {"rule": "cells", "misplaced": misplaced, "p": 0.0}
        elif negated:
            record |= {"rule": "negation", "p": 0.0}
        elif names:
            record |= {"rule": "names", "missing": names, "p": 0.0}
        else:
            llm = getattr(judge, "llm", None)
            if llm is None or not hasattr(llm, "runtime"):
                raise TypeError("probability verdicts need the local llama.cpp judge (--judge local)")
            p = self._model_p(judge, llm, premise, statement)
            record |= {"rule": "model", "p": round(p, 6)}
            if self.contrastive:
                # the statement's own plausibility to the model, without a premise, taken out
                alone = self._model_p(judge, llm, NO_PREMISE, statement)
                record |= {"p_without_premise": round(alone, 6), "p": round(contrast(p, alone), 6)}
        with self._lock:
            self._verdicts[key] = dict(record)
        return record

    def _model_p(self, judge: Any, llm: Any, premise: str, statement: str) -> float:
        """The model's P(yes) for (premise, statement), from the verdict store when it has it."""
        store_key = None
        if self.store is not None:
            from rag_lab.models.llm.disk_cache import cache_key

            store_key = cache_key("judge_verdict", model=str(getattr(llm, "model_name", "")),
                                  prompt_version=self.verdict_version + ":" + premise_sha(INSTRUCTION + QUESTION),
                                  inputs=[premise, statement])
        stored = self.store.get(store_key) if store_key is not None else None
        if stored is not None:
            return float(stored)
        started = time.perf_counter()
        p, tokens = ask_verdict(llm, premise, statement)
        if store_key is not None:
            self.store.put(store_key, p, kind="judge_verdict")
        stats = getattr(judge, "stats", None)
        if stats is not None:
            stats.calls += 1
            stats.seconds += time.perf_counter() - started
            stats.prompt_tokens += tokens["prompt_tokens"]
            stats.completion_tokens += tokens["completion_tokens"]
        return p

    async def generate(self, llm: Any, data: NLIStatementInput, *args: Any, **kwargs: Any) -> NLIStatementOutput:
        return await self.verdicts(llm, data.context, data.statements)

    async def verdicts(self, llm: Any, context: str, statements: list[str], question: str = "") -> NLIStatementOutput:
        """The verdicts of ``statements`` against ``context`` (see :meth:`verdict`), recorded in the
        judge's transcript."""
        import asyncio

        records = []
        for statement in statements:
            records.append(await asyncio.to_thread(self.verdict, llm, context, statement, question))
        transcript = getattr(llm, "transcript", None)
        if transcript is not None:
            transcript.append({"output": "ProbabilityVerdicts", "reply": {
                "premise_sha": premise_sha(context), "verdicts": records, "mean_p": float(np.mean([r["p"] for r in records])) if records else None,
                "cut_score": float(np.mean([r["p"] >= 0.5 for r in records])) if records else None}})
        # float verdicts: built without validation (RAGAS's field is an int); the metric reads them as numbers
        return NLIStatementOutput.model_construct(statements=[
            StatementFaithfulnessAnswer.model_construct(
                statement=r["statement"], verdict=r["p"],
                reason=f"{r['rule']}: " + (f"not stated {r['missing']}" if "missing" in r else
                                           f"from another row or column of a table {r['misplaced']}" if "misplaced" in r else
                                           "negated, the evidence is not" if r["rule"] == "negation"
                                           else "copied word for word from the context" if r["rule"] == "verbatim"
                                           else f"P(yes)={r['p']:.3f}") + f" (evidence: {r['evidence'][:300]})")
            for r in records])


def _mean_probability(self: Any, answers: NLIStatementOutput) -> float:
    verdicts = [float(a.verdict) for a in answers.statements]
    return float(np.mean(verdicts)) if verdicts else float("nan")


def _all_probability(self: Any, answers: NLIStatementOutput) -> float:
    """P(every statement is stated), the verdicts taken as independent: an answer is faithful only
    when all its claims are, and quoted lines (p = 1) do not dilute its one invented claim."""
    verdicts = [float(a.verdict) for a in answers.statements]
    return float(np.prod(verdicts)) if verdicts else float("nan")


async def _soft_verify_claims(self: Any, premise: str, hypothesis_list: list[str], callbacks: Any) -> np.ndarray:
    response = await self.nli_prompt.generate(data=NLIStatementInput(context=premise, statements=hypothesis_list),
                                              llm=self.llm, callbacks=callbacks)
    return np.array([float(r.verdict) for r in response.statements], dtype=float)


async def _soft_factual_correctness(self: Any, sample: Any, callbacks: Any) -> float:
    """RAGAS's factual correctness with soft counts; each direction's claims are verified against the
    other text read as an answer to the sample's question (a terse right answer need not repeat the
    question's terms, and neither need the reference)."""
    from rag_lab.evaluate.judge.not_applicable import NotApplicable

    question = sample.user_input or ""

    async def verified(premise: str, text: str) -> np.ndarray:
        claims = await self.decompose_claims(text, callbacks)
        reply = await self.nli_prompt.verdicts(self.llm, premise, claims, question)
        return np.array([float(r.verdict) for r in reply.statements], dtype=float)

    # one direction after the other: the model has one slot, and each direction's claims share a premise
    # that llama.cpp's prompt cache keeps only while the next call starts with it
    response_p = await verified(sample.reference, sample.response)
    reference_p = (await verified(sample.response, sample.reference) if self.mode != "precision"
                   else np.array([], dtype=float))
    if not response_p.size and not reference_p.size:
        raise NotApplicable("factual correctness does not apply: neither the answer nor the reference states a claim")
    tp, fp = float(np.sum(response_p)), float(np.sum(1 - response_p))
    fn = float(np.sum(1 - reference_p)) if self.mode != "precision" else 0.0
    if self.mode == "precision":
        score = tp / (tp + fp + 1e-8)
    elif self.mode == "recall":
        score = tp / (tp + fn + 1e-8)
    else:
        b2 = self.beta ** 2
        score = (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp + 1e-8)
    return float(round(score, 4))  # RAGAS rounds to 2 places: that alone ties close answers


_stores: dict[str, Any] = {}


def verdict_store(path: Any) -> Any:
    """The process's one ``DiskCache`` of verdicts at ``path`` (opened on first use)."""
    from pathlib import Path

    from rag_lab.models.llm.disk_cache import DiskCache

    key = str(path)
    if key not in _stores:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        _stores[key] = DiskCache(Path(path))
    return _stores[key]


def use_probability_verdicts(metric: Any, evidence: int = DEFAULT_EVIDENCE_PASSAGES, numbers: bool | str = True,
                             store: Any = None, negation: bool = False, names: bool = False,
                             verbatim: bool = False, claims_evidence: str = "passages",
                             contrastive: bool = False, cells: bool = False, faithfulness_score: str = "share") -> Any:
    """``metric`` (faithfulness or factual correctness) with probability verdicts and soft scores;
    ``store``: where the model's verdicts are kept (a ``DiskCache``; None: this metric's memory only)."""
    from rag_lab.evaluate.judge.per_statement import use_nli_prompt

    prompt = ProbabilityNLIPrompt(evidence=evidence, numbers=numbers, store=store, negation=negation, names=names,
                                  verbatim=verbatim, claims_evidence=claims_evidence, contrastive=contrastive,
                                  cells=cells, faithfulness_score=faithfulness_score)
    use_nli_prompt(metric, prompt)
    stamp(metric, *prompt.rules)
    name = type(metric).__name__
    if name == "Faithfulness":
        metric._compute_score = MethodType(_all_probability if faithfulness_score == "all" else _mean_probability, metric)
    elif name == "FactualCorrectness":
        from ragas.metrics.base import MetricType

        metric.verify_claims = MethodType(_soft_verify_claims, metric)
        metric._single_turn_ascore = MethodType(_soft_factual_correctness, metric)
        # the question is read (RAGAS passes a metric only its columns; the judged score's cache key holds them)
        metric.required_columns = {MetricType.SINGLE_TURN: {"response", "reference", "user_input"}}
    return metric


def cut_score(metric: str, replies: list[dict[str, Any]], reference: str, beta: float = 1.0) -> float | None:
    """The metric's score from a judgment's recorded probability verdicts cut at 0.5 (RAGAS's ratio
    or F1 with 0/1 verdicts); None when the judgment has no probability verdicts (another design, a
    cached score)."""
    entries = [r["reply"] for r in replies if r.get("output") == "ProbabilityVerdicts"]
    if not entries:
        return None
    if metric != "factual_correctness":
        verdicts = [v["p"] >= 0.5 for e in entries for v in e["verdicts"]]
        return sum(verdicts) / len(verdicts) if verdicts else None
    against_reference = premise_sha(reference)
    precision = [v["p"] >= 0.5 for e in entries if e["premise_sha"] == against_reference for v in e["verdicts"]]
    recall = [v["p"] >= 0.5 for e in entries if e["premise_sha"] != against_reference for v in e["verdicts"]]
    if len(entries) == 1:  # the answer is the reference: one premise, both directions the same verdicts
        recall = precision
    tp, fp, fn = sum(precision), len(precision) - sum(precision), len(recall) - sum(recall)
    b2 = beta ** 2
    return round((1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp + 1e-8), 4)
