"""rag-lab from Python (notebooks, scripts): the CLI's commands as functions, with the CLI's defaults.

    from rag_lab import api

    api.index("texas_childcare")                              # rag-lab index texas_childcare
    api.search("texas_childcare", "$4,106", mode="bm25")      # rag-lab search … --mode bm25
    answer = api.ask("texas_childcare", "What is …?")         # rag-lab ask …
    run = api.evaluate("texas_childcare", limit=5)            # rag-lab eval … --limit 5
    report = api.ir("scifact", limit=100)                     # rag-lab ir scifact --limit 100
    result = api.ablate("texas_childcare", grid="grid.yaml")  # rag-lab ablate … --grid grid.yaml
    api.report("runs/texas_childcare", "reports/run.html")    # rag-lab report … --out …
    result = api.compare("runs/a", "runs/b")                  # rag-lab compare runs/a runs/b
    api.calibrate(scores, labels)                             # a judged mean corrected by labels (PPI++)

Every default is the command's (``tests/cli/test_api_defaults.py`` holds them equal): rerank off
for the local model and on for remote providers (:func:`rag_lab.answer.engine.default_rerank`),
compression from the settings (``RAG_LAB_COMPRESS``), ``top_k`` = chunks the retriever returns per
query (search 5, answering 30 with ``top_n`` = 7 given to the LLM). A dataset is a name under the
datasets folder (``RAG_LAB_DATASETS_DIR``, default ``./datasets``) or a folder path; ``settings``
defaults to the environment's (:func:`rag_lab.config.get_settings`).

The keywords are the flags' names (``--fusion-k`` → ``fusion_k``); an unknown one raises
``TypeError`` listing those accepted. ``config=`` is ``--config``: a file written by ``rag-lab tune``
(or a ``TunedConfig``) whose values fill the keywords not given, the same way in every verb::

    api.search("texas_childcare_full", "…", config="configs/texas_childcare_full.toml")
    api.ask("texas_childcare_full", "…", config="configs/texas_childcare_full.toml")  # the same chunks, top_n to the LLM
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# cheap (tomllib, dataclasses): the CLI imports this module before parsing its arguments
from rag_lab.retrieve.configuration import DEFAULTS
from rag_lab.retrieve.registry import INDEX_MODES, answering_modes, is_agent, needs_dataset
from rag_lab.retrieve.tuned_config import answering_params, fused_levers, load_config

SEARCH_TOP_K = DEFAULTS.top_k  # `rag-lab search`: results shown (the retrievers' one default, 5)
IR_MODES = INDEX_MODES  # `rag-lab ir --modes`
EVAL_MODES = INDEX_MODES  # `rag-lab eval --modes`
ASK_MODE = "hybrid"  # `rag-lab ask/search --mode`


def load_settings(**overrides: Any):
    """The environment's settings (``RAG_LAB_*``, ``.env``), with ``overrides`` (field=value) applied."""
    from rag_lab.config import get_settings

    base = get_settings()
    return base.model_copy(update=overrides) if overrides else base


def load_dataset(name_or_path: Any, settings=None):
    """The :class:`rag_lab.datasets.Dataset` a name (under the datasets folder) or a folder path names."""
    from rag_lab.datasets import Dataset, resolve_dataset

    if isinstance(name_or_path, Dataset):
        return name_or_path
    return resolve_dataset(name_or_path, (settings or load_settings()).datasets_dir)


def _with_questions(dataset, questions: str | Path | None):
    """``questions=`` as ``--questions``: ``"human"``, ``"synthetic"`` or a file (None: human when the
    dataset has them, else its synthetic questions, said once)."""
    from rag_lab.evaluate.questions.question_set import with_questions

    return with_questions(dataset, questions)


def _names(value: Any, what: str) -> list[str] | None:
    """``modes`` / ``metrics`` as a list: a string is the command's comma-separated form ("bm25,hybrid"),
    not a sequence of one-letter names."""
    if value is None:
        return None
    if isinstance(value, str):
        return [name.strip() for name in value.split(",") if name.strip()]
    try:
        return [str(name) for name in value]
    except TypeError:
        raise TypeError(f"{what} must be a list of names or a comma-separated string, got {value!r}") from None


def _strict(function):
    """Unknown keywords raise ``TypeError`` naming them and listing the accepted ones: a misspelt or
    renamed lever (``rrf_k``) must not quietly run the default."""
    return _strict_as(function)(function)


def _strict_as(reference, after: str | None = None, extra: str | None = None):
    """:func:`_strict` for a function that passes its keywords on to ``reference``: it accepts
    ``reference``'s keywords (and shows ``reference``'s signature, ``extra`` inserted after ``after``)."""
    import functools
    import inspect

    def decorate(function):
        def shown():
            signature = _with_levers(inspect.signature(reference))
            if extra is not None:
                params = list(signature.parameters.values())
                at = [p.name for p in params].index(after) + 1
                params.insert(at, inspect.Parameter(extra, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str))
                signature = signature.replace(parameters=params)
            return signature

        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)

        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any):
            accepted = [name for name, p in shown().parameters.items() if p.kind in kinds]  # a lever added: taken
            unknown = [name for name in kwargs if name not in accepted]
            if unknown:
                from rag_lab.retrieve.configuration import renamed_hint

                hints = [hint for name in unknown if (hint := renamed_hint(name))]
                raise TypeError(f"api.{function.__name__}(): unknown keyword argument(s) "
                                f"{', '.join(repr(name) for name in unknown)}"
                                + (f" ({'; '.join(hints)})" if hints else "")
                                + f"; it accepts: {', '.join(accepted)}")
            return function(*args, **kwargs)

        checked.__signature__ = shown()
        return checked

    return decorate


def _with_levers(signature):
    """A verb's signature with its ``**levers`` spelt out, one keyword per fused lever of
    :class:`~rag_lab.retrieve.configuration.RetrievalConfig` (``**axis_values``: per ablation axis),
    None meaning not given; read at call time, so a field or axis added is taken."""
    import inspect

    from rag_lab.retrieve.configuration import axes, flag_levers

    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    spread = [p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    if not spread:
        return signature
    names = [a.key for a in axes()] if spread[0] == "axis_values" else list(flag_levers())
    at = next((i for i, p in enumerate(params) if p.name == "settings"), len(params))
    taken = {p.name for p in params}
    levers = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in names
              if name not in taken]
    return signature.replace(parameters=params[:at] + levers + params[at:])


@_strict
def index(dataset: Any, *, settings=None, force: bool = False, contextual: str = "none", yes: bool = False,
          context_in_prompt: bool = False, progress: bool = False):
    """``rag-lab index DATASET``: build or refresh the index (idempotent); returns a ``BuildResult``."""
    from rag_lab.index import build_index

    s = settings or load_settings()
    return build_index(load_dataset(dataset, s), s, force=force, contextual=contextual, yes=yes,
                       context_in_prompt=context_in_prompt, progress=progress)


@_strict
def search(dataset: Any, query: str, *, mode: str | None = None, top_k: int | None = None, contextual: str = "none",
           explain: bool = False, config: Any = None, settings=None, **levers: Any):
    """``rag-lab search DATASET QUERY``: ranked chunks (LlamaIndex ``NodeWithScore``). ``mode`` None:
    the config's, else hybrid; ``top_k`` None: the config's, else 5. The levers as the flags
    (``fusion_k`` = ``--fusion-k`` …); ``config`` = ``--config`` (a path or a ``TunedConfig``), whose
    values fill the keywords not given."""
    from rag_lab.retrieve import build_retriever
    from rag_lab.retrieve.base import check_query

    query = check_query(query)  # before any index loads: a wrong query fails at once
    s = settings or load_settings()
    tuned, mode = _config_and_mode(config, mode)
    ds = load_dataset(dataset, s) if needs_dataset(mode) else None
    _check_config(tuned, config, ds)
    levers = fused_levers(tuned, **levers)
    top_k = top_k if top_k is not None else tuned.top_k if tuned else SEARCH_TOP_K
    contextual = tuned.contextual if contextual in (None, "none") and tuned else contextual
    retriever = build_retriever(mode, s, ds, contextual=contextual, top_k=top_k, explain=explain or None, **levers)
    return retriever.retrieve(query)


@_strict
def answerer(dataset: Any, *, mode: str | None = None, rerank: bool | None = None, top_k: int | None = None,
             top_n: int | None = None, explain: bool = False, contextual: str = "none", config: Any = None,
             answer_style: str | None = None, settings=None, llm=None, retriever=None, **levers: Any):
    """The answerer behind ``rag-lab ask`` (ask it many questions: its models load once). ``top_k``:
    chunks the retriever returns (default 30), ``top_n``: chunks the LLM reads (default 7); ``config``
    and the levers as :func:`search`; ``answer_style`` as ``--answer-style`` (auto, evidence, free).
    ``llm`` / ``retriever`` replace the configured ones (tests, stubs)."""
    from rag_lab.answer import make_answerer
    from rag_lab.retrieve.base import check_top_k

    for name, value in (("top_k", top_k), ("top_n", top_n)):
        if value is not None:
            check_top_k(value, name)
    from rag_lab.config import with_answer_style

    s = with_answer_style(settings or load_settings(), answer_style)
    tuned, mode = _config_and_mode(config, mode)
    if mode not in answering_modes():  # the retrievers' own refusal would leave the agent out
        from rag_lab.errors import ConfigError

        raise ConfigError(f"Unknown answering mode {mode!r}", f"use one of: {', '.join(answering_modes())}")
    if tuned is not None and (is_agent(mode) or not needs_dataset(mode)):  # they take no fused-retrieval settings
        from rag_lab.errors import RagLabWarning, warn_at_caller

        warn_at_caller(RagLabWarning(f"config not applied: {mode} takes no fused-retrieval settings"))
        tuned = None
    ds = None if not needs_dataset(mode) or dataset is None else load_dataset(dataset, s)
    _check_config(tuned, config, ds)
    params = answering_params(tuned, top_k, top_n, contextual, **levers)
    if retriever is not None:
        params["retriever"] = retriever
    return make_answerer(mode, s, ds, rerank=rerank, explain=explain, llm=llm, **params)


@_strict_as(answerer, after="dataset", extra="question")
def ask(dataset: Any, question: str, **options: Any):
    """``rag-lab ask DATASET QUESTION``: one cited :class:`rag_lab.answer.Answer` (keywords as :func:`answerer`)."""
    from rag_lab.retrieve.base import check_query

    check_query(question)  # before the models load
    return answerer(dataset, **options).query(question)


@_strict
def evaluate(dataset: Any, modes=None, out: str | Path | None = None, *, limit: int | None = None,
             split: str = "all", resume: bool = False, retry_failed: bool = False, judge: str | None = None,
             metrics: list[str] | None = None, rerank: bool | None = None, conversations: bool = False,
             top_k: int | None = None, top_n: int | None = None, contextual: str = "none", config: Any = None,
             concurrency: int | None = None, max_cost: float | None = None, dry_run: bool = False, force: bool = False,
             answer_style: str | None = None, dev_split: str | Path | None = None, questions: str | Path | None = None,
             progress: bool = False, settings=None, llm=None, agent_llm=None, judge_llm=None, executor=None,
             **levers: Any):
    """``rag-lab eval DATASET``: answer and score the questions in each mode; returns the loaded run
    (``run.summary``, ``run.samples``, ``run.modes``). ``modes`` None: the config's mode, else
    dense, bm25, fusion, hybrid; ``out`` defaults to ``runs/<dataset>``; the other keywords as the
    command's flags (``config`` and the levers as :func:`answerer`). ``out`` holding another run is refused
    (``RunFolderTakenError``, naming both); ``force=True`` moves it aside first."""
    from rag_lab.errors import ConfigError
    from rag_lab.evaluate import run_evaluation

    if out is not None and not str(out).strip():
        raise ConfigError("out is empty", "pass a folder for the run, or leave out= out for runs/<dataset>")
    from rag_lab.config import with_answer_style
    from rag_lab.datasets import with_dev_split_file

    s = with_answer_style(settings or load_settings(), answer_style)
    ds = _with_questions(with_dev_split_file(load_dataset(dataset, s), dev_split), questions)
    tuned = _config_and_mode(config, None)[0]
    _check_config(tuned, config, ds)
    modes, metrics = _names(modes, "modes"), _names(metrics, "metrics")
    modes = modes if modes is not None else [tuned.mode] if tuned else list(EVAL_MODES)
    params = answering_params(tuned, top_k, top_n, contextual, **levers)
    return run_evaluation(ds, s, modes, Path(out) if out else Path("runs") / ds.name, limit=limit, split=split,
                          resume=resume, retry_failed=retry_failed, judge=judge, metrics=metrics, rerank=rerank,
                          conversations=conversations, concurrency=concurrency, max_cost=max_cost, dry_run=dry_run,
                          progress=progress, llm=llm, agent_llm=agent_llm, judge_llm=judge_llm, executor=executor,
                          force=force, **params)


@_strict
def ir(dataset: Any, modes=None, *, limit: int | None = None, split: str = "all", contextual: str = "none",
       resume: bool = True, config: Any = None, dev_split: str | Path | None = None,
       questions: str | Path | None = None, settings=None, **levers: Any):
    """``rag-lab ir DATASET``: ranx metrics per mode (an ``IRReport``: ``.results``, ``.per_query``).
    ``modes`` None: the config's mode, else dense, bm25, fusion, hybrid; ``config`` and the levers as
    :func:`search`."""
    from rag_lab.evaluate.retrieval.ir import evaluate_modes

    s = settings or load_settings()
    from rag_lab.datasets import with_dev_split_file

    ds = _with_questions(with_dev_split_file(load_dataset(dataset, s), dev_split), questions)
    tuned = _config_and_mode(config, None)[0]
    _check_config(tuned, config, ds)
    modes = _names(modes, "modes")
    modes = modes if modes is not None else [tuned.mode] if tuned else list(IR_MODES)
    contextual = tuned.contextual if contextual in (None, "none") and tuned else contextual
    index(ds, settings=s, contextual=contextual)  # no-op when up to date, as the command does
    params = fused_levers(tuned, **levers)
    return evaluate_modes(ds, s, modes, params, progress=False, resume=resume, limit=limit,
                          contextual=contextual, split=split)


@_strict
def ablate(dataset: Any, out: str | Path | None = None, *, grid: str | Path | dict | None = None,
           modes=None, config: Any = None,
           limit: int | None = None, seed: int = 42, split: str = "all", answer_configs: str | None = None,
           answer_limit: int = 5, concurrency: int | None = None, force: bool = False,
           dev_split: str | Path | None = None, questions: str | Path | None = None, settings=None,
           **axis_values: Any):
    """``rag-lab ablate DATASET``: the retrieval grid (an ``AblationResult``; ``results.csv`` in ``out``,
    default ``runs/ablation-<dataset>``). The grid: ``grid`` (a YAML/TOML file or a dict, as
    ``--grid``) and the axes (lists, as the flags); ``config`` (as ``--config``) gives each axis that
    neither names the file's one value (vary one lever around a tuned configuration); the command's
    defaults otherwise. ``answer_configs`` is ``--answer-configs``' text: None answers top-k 3/5/7 at
    the default k and prefetch (as the command does), ``"none"`` answers nothing. ``out`` holding another
    run is refused (``RunFolderTakenError``); ``force=True`` moves it aside first."""
    from rag_lab.evaluate.ablation.answers import parse_answer_configs
    from rag_lab.evaluate.ablation.grid_file import config_axes, grid_spec
    from rag_lab.evaluate.ablation.runner import run_ablation

    s = settings or load_settings()
    from rag_lab.datasets import with_dev_split_file

    ds = _with_questions(with_dev_split_file(load_dataset(dataset, s), dev_split), questions)
    tuned = _config_and_mode(config, None)[0]
    _check_config(tuned, config, ds)
    index(ds, settings=s)
    spec = grid_spec(grid, base=config_axes(tuned) if tuned else None, modes=_names(modes, "modes"),
                     **axis_values)
    answered = None if (answer_configs or "").strip().lower() == "none" else parse_answer_configs(answer_configs, spec)
    return run_ablation(ds, s, spec, Path(out) if out else Path(f"runs/ablation-{ds.name}"), limit=limit,
                        progress=False, seed=seed, answer_configs=answered, answer_limit=answer_limit,
                        split=split, concurrency=concurrency, force=force)


@_strict
def synth(dataset: Any, *, n: int = 100, seed: int = 0, out: str | Path | None = None, kinds=None,
          dry_run: bool = False, max_cost: float | None = None, progress: bool = False, settings=None, llm=None):
    """``rag-lab synth DATASET``: ``n`` checked questions made from the dataset's chunks, written to
    ``qa.synthetic.jsonl`` beside its files (or ``out``; never ``qa.jsonl``). Returns the outcome
    (``.records``, ``.summary()``), or with ``dry_run`` the estimate; ``llm`` replaces the configured LLM."""
    from rag_lab.evaluate.questions import synth as make

    s = settings or load_settings()
    return make(load_dataset(dataset, s), s, n=n, seed=seed, out=out, kinds=tuple(_names(kinds, "kinds") or ()) or None,
                dry_run=dry_run, max_cost=max_cost, llm=llm, progress=progress)


@_strict
def report(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """``rag-lab report RUN --out FILE``: one self-contained HTML file (default ``reports/<run>.html``)."""
    from rag_lab.report.html import write_report

    return write_report(Path(run_dir), Path(out or f"reports/{Path(run_dir).name}.html"))


@_strict
def compare(run_a: str | Path, run_b: str | Path, *, modes=None, metrics=None, intersect: bool = False,
            allow_judge_change: bool = False, flip_metric: str | None = None):
    """``rag-lab compare RUN_A RUN_B``: B against A paired by question id — what changed in the set-up,
    paired differences under the lab's significance policy, per-question flips
    (a :class:`rag_lab.evaluate.compare.Comparison`; ``.verdict()``, ``.table``, ``.to_json()``)."""
    from rag_lab.evaluate.compare import compare_runs

    return compare_runs(run_a, run_b, modes=_names(modes, "modes"), metrics=_names(metrics, "metrics"),
                        intersect=intersect, allow_judge_change=allow_judge_change, flip_metric=flip_metric)


def calibrate(scores, labels, alpha: float = 0.05, *, strata=None):
    """A judged mean corrected by a person's labels (PPI++ with power tuning): ``scores`` the judge's
    score of every sample (floats in [0, 1]), ``labels`` 0/1 for the labelled samples and None for the
    rest; ``strata`` each sample's stratum when the labels were drawn per stratum. Returns a
    :class:`~rag_lab.evaluate.statistics.calibrate.Calibration`: ``estimate``, ``ci``,
    ``labels_only_ci``, ``n_labelled``, ``kappa``, ``auc``, ``tpr``, ``tnr``, ``too_few_labels``."""
    from rag_lab.evaluate.statistics.calibrate import calibrate as calibrate_scores

    return calibrate_scores(scores, labels, alpha, strata=strata)


def _config_and_mode(config: Any, mode: str | None):
    """The ``config=`` value read (None when not given) and the mode: given, else the config's, else hybrid."""
    tuned = load_config(config)
    return tuned, mode or (tuned.mode if tuned else ASK_MODE)


def _check_config(tuned, config: Any, dataset) -> None:
    """Warns (``RagLabWarning``) when the config was tuned on another dataset; logs which levers it sets."""
    if tuned is None:
        return
    import logging

    from rag_lab.retrieve.tuned_config import announce, warn_if_tuned_elsewhere

    logging.getLogger(__name__).info(announce(tuned, config))
    warn_if_tuned_elsewhere(tuned, config, dataset.name if dataset is not None else None)


def defaults(settings=None) -> dict[str, Any]:
    """The defaults a command applies when a flag is not given, as this module applies them."""
    from rag_lab.answer.engine import DEFAULT_TOP_K, default_rerank
    from rag_lab.answer.rerank import DEFAULT_TOP_N

    s = settings or load_settings()
    return {"rerank": default_rerank(s), "compress": s.compress, "context_lines": s.context_lines,
            "search_top_k": SEARCH_TOP_K, "answer_top_k": DEFAULT_TOP_K, "answer_top_n": DEFAULT_TOP_N,
            "mode": ASK_MODE, "eval_modes": EVAL_MODES, "ir_modes": IR_MODES}
