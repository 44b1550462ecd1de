"""``rag-lab tune``: choose a configuration on the dev split, confirm it on the rest, write it down.

Steps (each timed, each reusing the ablation's stages):

1. **split** — the dataset's declared dev split; a dataset without one gets one drawn
   (:func:`rag_lab.splits.choose_dev_split`: a third of each source document's questions, a third of the one-question documents drawn together, seeded),
   written into the run folder (``--write-split`` also into the dataset folder) and said so;
2. **dev grid** — each dev question's legs retrieved once (:func:`~rag_lab.evaluate.ablation.legs.retrieve_legs`),
   every configuration fused from them (:func:`~rag_lab.evaluate.ablation.grid.compute_grid`), scored by
   the selection metric (:mod:`.scores`);
3. **select** — the one-standard-error rule, ties to the cheaper (:mod:`.select`);
4. **confirm** — the rest split's legs (no dev question among them: checked), the chosen and the
   default configurations fused from them, the lab's paired test (:func:`rag_lab.evaluate.statistics.significance.paired_p_value`)
   and bootstrap CIs;
5. **answers** (optional) — the chosen, the best and the default configurations answered on dev
   questions (:func:`~rag_lab.evaluate.ablation.answers.generate_answers`), key-fact recall/precision;
6. **write** — the chosen configuration as TOML (:mod:`rag_lab.retrieve.tuned_config`) and ``tune.json``,
   when the rest confirmed it; else the chosen mode's default, said so (:func:`recommendation`).

Retrieval cost: the legs of every question once (dev + rest = all), i.e. one ``ablate`` pass's retrieval.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from rag_lab.config import Settings
from rag_lab.datasets import Dataset
from rag_lab.evaluate.ablation.grid import Config, GridSpec, compute_grid
from rag_lab.evaluate.ablation.legs import retrieve_legs
from rag_lab.evaluate.ablation.runner import answer_questions
from rag_lab.evaluate.ablation.spot_check import is_unconfirmed, spot_check, spot_check_lines, unconfirmed_values
from rag_lab.evaluate.tune.confirm import Confirmation, confirm_on_rest
from rag_lab.evaluate.tune.scores import NDCG10, default_metric, selection_scores
from rag_lab.evaluate.tune.select import Selection, candidates_from, select_one_se
from rag_lab.retrieve.configuration import tune_grid
from rag_lab.splits import choose_dev_split, read_dev_split, read_id_file, split_ids, write_dev_split
from rag_lab.retrieve.tuned_config import TunedConfig, write_tuned_config

# The levers as axes: the grid's values of every axis (RRF k, prefetch, top-k, both modes), with three
# leg weight pairs and per-document caps none/1/2.
TUNE_SPEC = GridSpec(**tune_grid())  # the lever table's tune values (rag_lab.retrieve.configuration)
CONFIG_FILE, REPORT_FILE, SPLIT_FILE = "recommended.toml", "tune.json", "dev_split.txt"
NDCG_CUTOFF = 10  # the list nDCG@10 reads
ANSWER_SECONDS_LOCAL = 25.0  # a rough per-generation estimate for the local model on 2 CPU cores (printed as ≈)


@dataclass
class TuneResult:
    dataset: str
    metric: str
    split_note: str
    n_dev: int
    n_rest: int
    selection: Selection
    confirmation: Confirmation
    config: TunedConfig
    config_path: Path
    run_dir: Path
    timing: dict[str, float] = field(default_factory=dict)
    answers: "pandas.DataFrame | None" = None  # noqa: F821 - per config: key-fact recall/precision on dev
    answer_cost: str = ""
    rewrites: dict | None = None  # the num_queries lever: its configurations' dev means and LLM cost
    split_declared: bool = True  # the dataset folder holds the dev split (`ir --split rest` can use it)
    rest_looks: int = 0  # tune runs that have looked at this rest split, this one included
    spot_check: dict | None = None  # live queries against the dev grid (:mod:`..ablation.spot_check`)

    def to_dict(self) -> dict:
        return {"dataset": self.dataset, "metric": self.metric, "split": self.split_note, "n_dev": self.n_dev,
                "n_rest": self.n_rest, "selection": self.selection.to_dict(),
                "confirmation": self.confirmation.to_dict(), "config": self.config.settings(),
                "config_path": str(self.config_path), "timing_s": self.timing, "answer_cost": self.answer_cost,
                "rewrites": self.rewrites, "rest_looks": self.rest_looks, "spot_check": self.spot_check,
                "answers": None if self.answers is None else self.answers.to_dict(orient="records")}


def dev_ids_for(dataset: Dataset, run_dir: Path, seed: int = 0, write_to_dataset: bool = False) -> tuple[frozenset[str], str]:
    """The dev split's ids and a sentence saying where they came from (declared, or drawn now)."""
    declared = dataset.dev_split
    if declared:
        return declared, f"the declared dev split ({dataset.root / SPLIT_FILE})"
    drawn_file = run_dir / SPLIT_FILE
    if drawn_file.exists():  # a rerun keeps the split it drew (the legs cache is keyed by question)
        return read_id_file(drawn_file), f"the dev split drawn by an earlier tune run ({drawn_file})"
    queries, qrels = dataset.judged_queries()
    # each question's source: its (first) relevant document, the best-graded first
    sources = {q: max(qrels[q].items(), key=lambda item: (item[1], item[0]))[0] for q in queries if qrels.get(q)}
    ids = choose_dev_split(sources, seed=seed)
    header = (f"Dev split of {dataset.name} drawn by `rag-lab tune` (no dev_split.txt was declared): {len(ids)} of "
              f"{len(sources)} judged questions, a third of each source document's (of one-question documents: a third of them), "
              f"seed {seed} (rag_lab.splits).")
    write_dev_split(run_dir, ids, header)
    where = str(drawn_file)
    if write_to_dataset:
        where += f" and {write_dev_split(dataset.root, ids, header)}"
    return frozenset(ids), f"a dev split DRAWN now ({dataset.name} declares none): {len(ids)} questions, written to {where}"


def confirmed_scores(scores: dict, configs: list[Config], check: dict) -> tuple[dict, int]:
    """``scores`` without the configurations holding an axis value whose live check differed from the
    grid (what the formula computes there is not what the engine returns), and how many were left out."""
    unconfirmed = unconfirmed_values(check)
    if not unconfirmed:
        return scores, 0
    doubtful = {c.id for c in configs if is_unconfirmed(c.to_dict(), unconfirmed)}
    kept = {cid: per_q for cid, per_q in scores.items() if cid not in doubtful}
    return kept, len(scores) - len(kept)


def default_top_k(metric: str) -> int:
    """The default's top-k, as tune writes it: the generator's chunks (``ask``: 7), or the 10 results nDCG@10 reads."""
    from rag_lab.answer.rerank import DEFAULT_TOP_N

    return NDCG_CUTOFF if metric == NDCG10 else DEFAULT_TOP_N


def default_config(spec: GridSpec, mode: str, metric: str) -> Config:
    """The lab's default for ``mode`` (:data:`rag_lab.retrieve.configuration.DEFAULTS`), whatever the user's
    grid holds — at the top-k tune writes for it (:func:`default_top_k`): the confirmation's control
    is the configuration "KEEP THE DEFAULT" would write, so its rest mean is the file's."""
    return GridSpec().baseline(mode, default_top_k(metric))


def default_note(spec: GridSpec, defaults: list[Config]) -> str:
    """Says when the lab's default is not one of the grid's configurations (it is added as the control)."""
    outside = [d for d in defaults if d not in set(spec.configs())]
    if not outside:
        return ""
    return ("the lab's default " + ", ".join(d.id for d in outside) + " is not in the grid: added as the "
            "confirmation's control")


def tune(dataset: Dataset, settings: Settings, out_dir: Path | str, spec: GridSpec = TUNE_SPEC,
         metric: str | None = None, answers: int = 0, answer_top: int = 3, llm=None,
         concurrency: int | None = None, seed: int = 42, split_seed: int = 0, write_split: bool = False,
         config_path: Path | str | None = None, progress: bool = True, on_step=None,
         num_queries: int = 1, force: bool = False) -> TuneResult:
    """The whole tune (see the module doc). ``answers``: dev questions answered per configuration
    (0 = no answer-level step); ``on_step(message)`` hears each step as it starts. ``num_queries`` > 1:
    the chosen and the best configurations are also measured with LLM query rewrites (``llm``, else
    the settings' generator) and compete under the same rule as the dearest lever. ``out_dir`` holding
    another run (another dataset, metric, grid, seed or num_queries) is refused, naming both; ``force``
    moves it aside first (:mod:`rag_lab.evaluate.store.claim`); a rerun of the same tune reuses its caches."""
    from rag_lab.evaluate.store.run_lock import run_lock

    with run_lock(out_dir):  # one writer per run folder
        return _tune(dataset, settings, Path(out_dir), spec, metric=metric, answers=answers, answer_top=answer_top,
                     llm=llm, concurrency=concurrency, seed=seed, split_seed=split_seed, write_split=write_split,
                     config_path=config_path, progress=progress, on_step=on_step, num_queries=num_queries, force=force)


# What a tune's recommendation depends on besides its dataset (tune.json key → label shown when it differs).
TUNE_LABELS = {"metric": "--metric", "grid": "grid", "seed": "--seed", "num_queries": "--num-queries",
               "questions": "--questions"}


def claim_tune_folder(out: Path, dataset: Dataset, identity: dict, *, force: bool) -> Path | None:
    """Refuse (or, with ``force``, move aside) another run in ``out`` before this tune writes there."""
    from rag_lab.evaluate.store.claim import RunOwner, changed, claim_run_folder

    try:
        previous = json.loads((out / REPORT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        previous = None
    differences = changed(previous, identity, TUNE_LABELS) if isinstance(previous, dict) else []
    owner = RunOwner("tune", dataset.name, str(dataset.root), f"metric {identity['metric']}")
    return claim_run_folder(out, owner, differences, force=force)


def _tune(dataset: Dataset, settings: Settings, out: Path, spec: GridSpec, *, metric, answers, answer_top, llm,
          concurrency, seed, split_seed, write_split, config_path, progress, on_step, num_queries,
          force) -> TuneResult:
    from rag_lab.evaluate.plan.study_plan import resolve_study
    from rag_lab.index import CorpusIndex

    say = on_step or (lambda message: None)
    metric = metric or default_metric(dataset)
    spec = ranking_top_k(spec, metric, say)
    from rag_lab.evaluate.questions.question_set import question_set

    identity = {"metric": metric, "grid": spec.to_dict(), "seed": seed, "num_queries": num_queries,
                "questions": question_set(dataset).as_dict()}
    claim_tune_folder(out, dataset, identity, force=force)
    timing: dict[str, float] = {}

    started = time.perf_counter()
    from rag_lab.evaluate.tune.questions import tuning_questions

    dev_queries, rest_queries, qrels, dev, split_note = tuning_questions(dataset, dev_ids_for, out, split_seed,
                                                                         write_split)
    if not dev_queries or not rest_queries:
        raise ValueError(f"{dataset.name}: the dev split leaves {len(dev_queries)} dev and {len(rest_queries)} rest "
                         "questions; tuning needs both")
    timing["split_s"] = time.perf_counter() - started
    say(f"split: {split_note}; {len(dev_queries)} dev, {len(rest_queries)} rest questions")

    index = CorpusIndex.open(dataset, settings)
    answering = (answers > 0 and dataset.kind == "folder" and dataset.has_qa) or num_queries > 1
    plan = resolve_study(index, settings, answering=answering, llm=llm)  # once: the models below are these
    say(f"dev grid: {len(spec.configs()):,} configurations × {len(dev_queries)} dev questions, metric {metric}")
    started = time.perf_counter()
    # hybrid's legs at each prefetch are the engine's own lists, as in ``ablate`` (:mod:`..ablation.legs`)
    dev_questions, _ = retrieve_legs(index, dev_queries, out / "dev", spec.modes, spec.depth, progress=progress,
                                     prefetches=spec.prefetch)
    timing["dev_legs_s"] = time.perf_counter() - started
    started = time.perf_counter()
    grid = compute_grid(dev_questions, spec)
    scores = selection_scores(metric, grid, dev_questions, qrels)
    timing["dev_grid_s"] = time.perf_counter() - started

    started = time.perf_counter()
    check = spot_check(index, dev_questions, dev_queries, grid, spec)
    for line in spot_check_lines(check, dataset.name):
        say(line)
    scores, left_out = confirmed_scores(scores, grid.configs, check)
    if left_out:
        say(f"{left_out:,} configurations hold a value the live check could not confirm: left out of the selection")
    timing["spot_check_s"] = time.perf_counter() - started

    started = time.perf_counter()
    by_id = {c.id: c for c in grid.configs}
    candidates = candidates_from({by_id[cid]: per_q for cid, per_q in scores.items()}, list(dev_queries))
    reference = spec.baseline(spec.modes[0], max(spec.top_k))
    selection = select_one_se(candidates, reference)
    timing["select_s"] = time.perf_counter() - started
    rewrites = None
    if num_queries > 1:
        from rag_lab.evaluate.tune.query_gen import rewrite_scores

        tried = list(dict.fromkeys([selection.chosen.config, selection.best.config]))
        say(f"query rewrites: {len(tried)} configuration(s) with num_queries={num_queries} on dev "
            f"({len(dev_queries)} LLM calls, one per question)")
        started = time.perf_counter()
        if llm is None:
            from rag_lab.models.llm import get_llm

            llm = get_llm(settings)
        scored, cost = rewrite_scores(index, llm, dev_queries, dev_questions, tried, num_queries, out / "dev", metric,
                                      qrels, spec.depth, progress=progress)
        extra = candidates_from(scored, list(dev_queries), {c: num_queries for c in scored})
        selection = select_one_se(candidates + extra, reference)
        rewrites = {"num_queries": num_queries, "cost_per_question": cost.per_question(), "cost": cost.describe(),
                    "dev": [{"config": c.config.id, "mean": c.mean, "without_rewrites": next(
                        x.mean for x in candidates if x.config == c.config)} for c in extra],
                    "kept": selection.chosen.num_queries > 1}
        timing["rewrites_s"] = time.perf_counter() - started
    chosen = selection.chosen.config

    from rag_lab.evaluate.tune.rest_looks import record_rest_look

    looks = record_rest_look(settings.data_dir, dataset.name, dev, out)
    say(f"confirm: {chosen.id} against the defaults on {len(rest_queries)} rest questions (paired test; "
        f"look {looks} at this rest split)")
    started = time.perf_counter()
    defaults = [default_config(spec, mode, metric) for mode in spec.modes]
    if note := default_note(spec, defaults):
        say(note)
    confirmation = confirm_on_rest(index, rest_queries, dev, qrels, out / "rest", chosen, defaults, metric,
                                   max(spec.depth, *(d.prefetch for d in defaults)), progress=progress, seed=seed,
                                   num_queries=selection.chosen.num_queries, llm=llm)
    timing["confirm_s"] = time.perf_counter() - started

    answer_frame, answer_cost = None, ""
    if answers > 0 and dataset.kind == "folder" and dataset.has_qa:
        answer_frame, answer_cost = _answer_check(index, settings, dataset, grid, selection, defaults, dev_queries,
                                                  qrels, out / "dev", answers, answer_top, llm, concurrency,
                                                  progress, say, timing, plan.generator)

    config = recommendation(selection, confirmation, metric, dataset.name, len(dev_queries))
    path = Path(config_path) if config_path else out / CONFIG_FILE
    header = (f"rag-lab tune {dataset.name}: {config.describe()}\n"
              + (f"chosen on the dev split by {metric} (one-standard-error rule, ties to the cheaper), confirmed on the rest.\n"
                 if confirmation.significant else
                 f"the default, kept: the dev pick ({chosen.id}) was not significantly better on the rest split.\n")
              + f"Use it: rag-lab search|ir|ask|eval {dataset.name} --config {path}")
    write_tuned_config(path, config, header)
    result = TuneResult(dataset.name, metric, split_note, len(dev_queries), len(rest_queries), selection,
                        confirmation, config, path, out, timing, answer_frame, answer_cost, rewrites,
                        split_declared=bool(dataset.dev_split), rest_looks=looks, spot_check=check)
    record = {**result.to_dict(), "dataset_root": str(dataset.root), "models": plan.models,
              "index_fingerprint": plan.index_fingerprint, **identity}  # identity: what a rerun must share
    (out / REPORT_FILE).write_text(json.dumps(record, indent=2, default=str, ensure_ascii=False))
    return result


def recommendation(selection: Selection, confirmation: Confirmation, metric: str, dataset: str,
                   n_dev: int) -> TunedConfig:
    """What tune writes: the dev pick when the rest split confirms it (significantly better than its
    mode's default by the paired test), else that default — an unconfirmed change is not
    recommended (SciFact: every setting within noise of the default). The default is measured on the
    rest at the top-k it is written with (:func:`default_config`), so its rest mean is the file's."""
    chosen, adopted = selection.chosen.config, confirmation.significant
    written = chosen if adopted else replace(confirmation.against.config, top_k=default_top_k(metric))
    written_mean = confirmation.chosen.mean if adopted else confirmation.against.mean
    provenance = {"dataset": dataset, "metric": metric, "chosen_on": f"dev ({n_dev} questions)",
                  "adopted": adopted, "dev_pick": chosen.id, "dev_mean": round(selection.chosen.mean, 4),
                  "rest_pick_mean": round(confirmation.chosen.mean, 4), "rest_mean": round(written_mean, 4),
                  "rest_default_mean": round(confirmation.against.mean, 4),
                  "rest_p_value": confirmation.p_value, "rest_decided_by": confirmation.decided_by,
                  # the configuration the rest mean was measured with (the default: at the grid's largest top-k)
                  "grid_config": (chosen if adopted else confirmation.against.config).id}
    # the grid's top-k is the list its metric read and the context its answers got: the retriever
    # returns it (top_k) and the LLM reads all of it (top_n), in search, ask and eval alike
    levers = {name: value for name, value in written.levers().items() if name in TunedConfig.__dataclass_fields__}
    return TunedConfig(mode=written.mode, **levers, top_n=written.top_k,
                       num_queries=selection.chosen.num_queries if adopted else 1, provenance=provenance)


def ranking_top_k(spec: GridSpec, metric: str, say=lambda message: None) -> GridSpec:
    """nDCG@10 reads a ranked list of 10: a top-k below 10 scores a truncated list, not a cheaper one
    (there is no generator context to save on BEIR), so those values leave the grid — else the
    one-SE rule hands the win to top-3 (measured on SciFact: rest nDCG@10 0.666 vs the default's 0.717)."""
    if metric != NDCG10 or all(k >= NDCG_CUTOFF for k in spec.top_k):
        return spec
    kept = tuple(k for k in spec.top_k if k >= NDCG_CUTOFF) or (NDCG_CUTOFF,)
    say(f"top-k {', '.join(map(str, kept))} only: {metric} scores the first {NDCG_CUTOFF} results, a shorter "
        f"list is not a cheaper configuration")
    return replace(spec, top_k=kept)


def answer_configs(selection: Selection, defaults: list[Config], top: int) -> list[Config]:
    """The configurations answered: the chosen, the cheapest others within one SE, the best, the
    chosen mode's default — ``top`` of them plus that default, no repeats."""
    picked = [c.config for c in selection.within[:top]] + [selection.best.config]
    chosen_default = next(d for d in defaults if d.mode == selection.chosen.config.mode)
    return list(dict.fromkeys(picked[:top] + [replace(chosen_default, top_k=selection.chosen.config.top_k)]))


def _answer_check(index, settings, dataset, grid, selection, defaults, dev_queries, qrels, run_dir, n, top, llm,
                  concurrency, progress, say, timing, generator):
    from rag_lab.evaluate.ablation.answers import answers_frame, generate_answers
    from rag_lab.models.concurrency import resolve_concurrency

    configs = answer_configs(selection, defaults, top)
    qids = answer_questions(dev_queries, qrels, n)
    generations = len({(c.id, q) for c in configs for q in qids})
    local = settings.llm_is_local and llm is None
    cost = (f"{generations} generations ({len(configs)} configurations × {len(qids)} dev questions; repeated contexts "
            f"are generated once) with {generator}"
            + (f", ≈{generations * ANSWER_SECONDS_LOCAL / 60:.0f} min at ≈{ANSWER_SECONDS_LOCAL:.0f} s each on CPU"
               if local else ""))
    say(f"answers (dev only): {cost}")
    started = time.perf_counter()
    concurrency = resolve_concurrency(concurrency, settings, None, llm)
    rows = generate_answers(index, settings, grid, configs, dev_queries, run_dir, qids, progress=progress, llm=llm,
                            concurrency=concurrency, generator=generator)
    frame = answers_frame(rows, {p.id: p for p in dataset.load_qa()}, qrels)
    columns = ["key_fact_recall", "key_fact_precision", "cites_relevant", "latency_s"]
    frame[columns] = frame[columns].astype(float)  # None (no reference answer) → NaN, left out of the mean
    summary = frame.groupby("config", sort=False)[columns].mean().reset_index()
    summary["questions"] = len(qids)
    timing["answers_s"] = time.perf_counter() - started
    return summary, cost
