"""`rag-lab tune` end to end on the real texas_childcare index: a dev split drawn (the dataset
declares none), the grid on dev, the confirmation on the rest only, the config file reproducing
the confirmed number through the live retrievers."""

from __future__ import annotations

import json
import statistics

import pytest

from rag_lab.datasets import resolve_dataset
from rag_lab.evaluate.ablation.grid import GridSpec
from rag_lab.evaluate.tune import tune
from rag_lab.evaluate.tune.confirm import confirm_on_rest
from rag_lab.retrieve.tuned_config import read_tuned_config

SPEC = GridSpec(modes=("fusion", "hybrid"), fusion_k=(10, 60), prefetch=(20, 100), top_k=(3, 5),
                weights=((1.0, 1.0),), max_per_doc=(0, 1))


@pytest.fixture(scope="module")
def texas(texas_index, lab_settings):
    return resolve_dataset("texas_childcare", lab_settings.datasets_dir)


@pytest.fixture(scope="module")
def result(texas, lab_settings, tmp_path_factory):
    assert not texas.dev_split  # the drawn-split path is the one under test
    return tune(texas, lab_settings, tmp_path_factory.mktemp("runs") / "tune-texas", SPEC, progress=False)


def _legs_qids(path) -> set[str]:
    return {json.loads(line)["qid"] for line in path.read_text().splitlines() if line.strip()}


def test_a_dev_split_is_drawn_into_the_run_folder_and_said_so(result, texas):
    assert "DRAWN" in result.split_note and str(result.run_dir / "dev_split.txt") in result.split_note
    assert not (texas.root / "dev_split.txt").exists()  # the dataset folder is left alone
    assert result.n_dev + result.n_rest == len(texas.judged_queries()[0])
    assert 0 < result.n_dev < result.n_rest


def test_the_confirmation_never_sees_dev_questions(result):
    from rag_lab.splits import read_id_file

    dev = read_id_file(result.run_dir / "dev_split.txt")
    rest_seen = _legs_qids(result.run_dir / "rest" / "legs.jsonl")
    dev_seen = _legs_qids(result.run_dir / "dev" / "legs.jsonl")
    assert dev_seen == set(dev) and len(rest_seen) == result.n_rest
    assert not rest_seen & set(dev)
    assert result.confirmation.n == result.n_rest


def test_confirm_refuses_a_dev_question(result, texas_index, texas):
    queries, qrels = texas.judged_queries()
    some = dict(list(queries.items())[:3])
    chosen = result.selection.chosen.config
    with pytest.raises(ValueError, match="must not see dev questions"):
        confirm_on_rest(texas_index, some, frozenset(list(some)[:1]), qrels, result.run_dir / "bad", chosen,
                        [chosen], "chunk_hit@5", 100, progress=False)


def test_selection_follows_the_one_se_rule(result):
    sel = result.selection
    assert result.metric == "chunk_hit@5"
    assert sel.best.mean == max(c.mean for c in sel.within)
    assert sel.chosen is sel.within[0] and sel.chosen.mean >= sel.threshold - 1e-12
    assert len(result.timing) >= 5 and all(v >= 0 for v in result.timing.values())


def test_the_config_file_reproduces_the_confirmed_number_live(result, texas, lab_settings):
    from rag_lab.evaluate.retrieval.ir import chunk_hits, run_mode
    from rag_lab.splits import read_id_file

    config = read_tuned_config(result.config_path)
    # the dev pick when the rest confirmed it, else its mode's default (this small corpus: not confirmed)
    confirmed = result.confirmation.significant
    written = result.selection.chosen.config if confirmed else result.confirmation.against.config
    assert config.provenance["adopted"] is confirmed and config.provenance["metric"] == "chunk_hit@5"
    assert (config.mode, config.fusion_k, config.prefetch, config.max_per_doc) == \
        (written.mode, written.k, written.prefetch, written.max_per_doc)
    dev = read_id_file(result.run_dir / "dev_split.txt")
    queries, qrels = texas.judged_queries()
    rest = {q: t for q, t in queries.items() if q not in dev}
    live = run_mode(config.mode, texas, lab_settings, rest, config.retrieval_params(), progress=False, resume=False)
    confirmed_mean = (result.confirmation.chosen if confirmed else result.confirmation.against).mean
    assert statistics.fmean(chunk_hits(live.chunk_docs, qrels, k=min(5, config.top_k)).values()) == \
        pytest.approx(confirmed_mean)
    assert config.provenance["rest_mean"] == pytest.approx(confirmed_mean, abs=5e-5)  # rounded to 4 places
    from rag_lab.evaluate.tune.report import render_tune

    printed = render_tune(result)
    assert "dev pick " in printed and ("recommendation: the dev pick, confirmed" if confirmed
                                       else "recommendation: KEEP THE DEFAULT") in printed
    report = json.loads((result.run_dir / "tune.json").read_text())
    assert report["confirmation"]["chosen"]["mean"] == pytest.approx(result.confirmation.chosen.mean)
    assert report["rest_looks"] == result.rest_looks >= 1
    assert f"this rest split has been looked at by {result.rest_looks} tune run(s)" in printed


def test_query_rewrites_are_measured_with_their_cost_and_dropped_when_they_add_nothing(texas, lab_settings, tmp_path):
    import re

    from tests.answer.conftest import ScriptedLLM

    echo = ScriptedLLM(script=lambda prompt: re.search(r"Query: (.*)\n", prompt).group(1))  # a rewrite = the question
    small = GridSpec(modes=("fusion",), fusion_k=(60,), prefetch=(100,), top_k=(5,), max_per_doc=(0, 1))
    result = tune(texas, lab_settings, tmp_path / "rw", small, progress=False, num_queries=2, llm=echo)
    assert len(echo.prompts) == result.n_dev  # one LLM call per dev question; the confirmation needs none
    rewrites = result.rewrites
    assert rewrites["cost_per_question"]["llm_calls"] == 1.0 and "LLM call" in rewrites["cost"]
    for row in rewrites["dev"]:  # the same query twice ranks as once: the same score, at a higher cost
        assert row["mean"] == pytest.approx(row["without_rewrites"])
    assert rewrites["kept"] is False and result.config.num_queries == 1


def test_the_answer_check_runs_on_dev_only_and_says_its_cost_first(texas, texas_index, lab_settings, tmp_path):
    from tests.answer.conftest import ScriptedLLM
    from tests.evaluate.conftest import quoting_answer

    llm = ScriptedLLM(script=quoting_answer)
    heard: list[str] = []
    small = GridSpec(modes=("fusion",), fusion_k=(10, 60), prefetch=(100,), top_k=(3, 5), max_per_doc=(0, 1))
    result = tune(texas, lab_settings, tmp_path / "ans", small, progress=False, answers=2, answer_top=2, llm=llm,
                  on_step=heard.append)
    said = [m for m in heard if m.startswith("answers (dev only)")]
    assert len(said) == 1 and "generations" in said[0]
    # the generator by its full identity, in the printed cost and in tune.json with the index's embedding
    from rag_lab.models.llm.identity import llm_identity

    assert said[0].endswith(f"with {llm_identity(llm)}")
    record = json.loads((result.run_dir / "tune.json").read_text(encoding="utf-8"))
    assert record["models"] == {"llm": llm_identity(llm), "embedding": texas_index.manifest.embed_model, "judge": None}
    assert record["index_fingerprint"] == texas_index.manifest.fingerprint
    assert heard.index(said[0]) > next(i for i, m in enumerate(heard) if m.startswith("confirm"))
    frame = result.answers
    assert result.selection.chosen.config.id in set(frame["config"])
    assert frame["key_fact_recall"].between(0, 1).all() and (frame["questions"] == 2).all()
    from rag_lab.splits import read_id_file

    dev = read_id_file(result.run_dir / "dev_split.txt")
    asked = {line.split("Question: ", 1)[1].split("\n", 1)[0] for p in llm.prompts for line in [p] if "Question: " in p}
    dev_texts = {t for q, t in texas.judged_queries()[0].items() if q in dev}
    assert asked and asked <= dev_texts
    assert result.timing["answers_s"] >= 0


def test_the_printout_shows_the_default_as_written_and_says_when_nothing_separates(result):
    import dataclasses

    import numpy as np

    from rag_lab.evaluate.tune.report import render_tune
    from rag_lab.evaluate.tune.select import Candidate, select_one_se

    config = read_tuned_config(result.config_path)
    printed = render_tune(result)
    if not result.confirmation.significant:  # the default is written: its row shows the file's top-k
        assert f"default {config.mode}" in printed
        row = next(line for line in printed.splitlines() if line.strip().startswith(f"default {config.mode}"))
        assert row.rstrip().endswith(f"top={config.top_k}"), row
    # every configuration scoring the same on dev: the printout says the metric cannot tell them apart
    tied = [Candidate(c.config, np.ones(result.n_dev)) for c in result.selection.within[:3]]
    tie = dataclasses.replace(result, selection=select_one_se(tied, tied[0].config))
    text = render_tune(tie)
    assert f"note: all {len(tied)} configurations tie at 1.000 on dev: chunk_hit@5 cannot tell them apart here" in text


def test_the_printed_reproduce_command_writes_nothing_into_the_dataset_folder(result, texas, lab_cli):
    import re
    import shlex

    from rag_lab.evaluate.tune.report import render_tune

    line = next(x for x in render_tune(result).splitlines() if x.startswith("reproduce: "))
    argv = shlex.split(line.removeprefix("reproduce: "))
    assert argv[:2] == ["rag-lab", "ir"] and "--dev-split" in argv  # the drawn split, read from the run folder
    before = sorted(p for p in texas.root.rglob("*"))
    code, out, err = lab_cli(*argv[1:])
    assert code == 0, err
    assert sorted(p for p in texas.root.rglob("*")) == before and not (texas.root / "dev_split.txt").exists()
    assert f"{result.n_rest} of {result.n_rest} judged queries of the rest split" in out  # the drawn split's rest
    config = read_tuned_config(result.config_path)
    shown = float(re.search(rf"chunk_hit@5 .*?{config.mode} (\d\.\d{{4}}) \[", out).group(1))
    if config.top_k >= 5:  # ir reads the first five chunks, as the tune measured them
        assert shown == pytest.approx(config.provenance["rest_mean"], abs=1e-4)


def test_hybrid_legs_are_the_engines_own_at_each_prefetch_and_the_spot_check_runs(result):
    """As in ``ablate``: the dev grid fuses Qdrant's own lists at each prefetch (not cuts of the deep list),
    and live queries at every axis value of the grid are compared with it."""
    lines = [json.loads(line) for line in (result.run_dir / "dev" / "legs.jsonl").read_text().splitlines()]
    for line in lines:
        for p in SPEC.prefetch:
            assert f"dense@{p}" in line["legs"] and f"sparse@{p}" in line["legs"]
            assert len(line["legs"][f"sparse@{p}"]) <= p
    check = result.spot_check
    assert check["modes"] == ["fusion", "hybrid"] and check["axes_checked"]
    checked = {(c["mode"], axis, value) for c in check["checks"] for axis, value in c["axes"]}
    for mode in SPEC.modes:
        assert {(mode, "prefetch", str(p)) for p in SPEC.prefetch} <= checked
        assert {(mode, "k", str(k)) for k in SPEC.fusion_k} <= checked
    assert check["equal"], check["unconfirmed"]  # this index: the grid reproduces the engine everywhere
    assert json.loads((result.run_dir / "tune.json").read_text())["spot_check"]["equal"] is True


def test_configurations_holding_an_unconfirmed_value_leave_the_selection():
    from rag_lab.evaluate.ablation.grid import Config
    from rag_lab.evaluate.tune.run import confirmed_scores

    configs = [Config("hybrid", 60, p, 1.0, 1.0, 5) for p in (20, 100)] + [Config("fusion", 60, 20, 1.0, 1.0, 5)]
    scores = {c.id: {"q1": 1.0} for c in configs}
    check = {"checks": [{"mode": "hybrid", "config": configs[0].id, "axes": [["prefetch", "20"]], "equal": False},
                        {"mode": "fusion", "config": configs[2].id, "axes": [["prefetch", "20"]], "equal": True}]}
    kept, left_out = confirmed_scores(scores, configs, check)
    assert left_out == 1 and set(kept) == {configs[1].id, configs[2].id}
    assert confirmed_scores(scores, configs, {"checks": [{**check["checks"][1]}]}) == (scores, 0)
