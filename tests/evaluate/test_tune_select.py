"""The tuner's selection rule: the cheapest configuration within one standard error of the best."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.evaluate.ablation.grid import Config
from rag_lab.evaluate.tune.select import Candidate, cost_key, select_one_se

DEFAULT = Config("fusion", 60, 100, 1.0, 1.0, 10)


def hits(n_hit: int, n: int = 40) -> np.ndarray:
    return np.array([1.0] * n_hit + [0.0] * (n - n_hit))


def test_a_cheaper_configuration_within_one_se_beats_the_best():
    best = Candidate(Config("hybrid", 10, 100, 1.0, 1.0, 10, 1), hits(36))  # 0.90, SE ≈ 0.048
    cheaper = Candidate(Config("hybrid", 10, 50, 1.0, 1.0, 5, 1), hits(35))  # 0.875: within one SE
    selection = select_one_se([best, cheaper], DEFAULT)
    assert selection.best is best
    assert selection.threshold == pytest.approx(0.9 - np.std(hits(36), ddof=1) / np.sqrt(40))
    assert selection.chosen is cheaper
    assert [c.config for c in selection.within] == [cheaper.config, best.config]


def test_a_cheaper_configuration_beyond_one_se_is_not_chosen():
    best = Candidate(Config("fusion", 10, 100, 1.0, 1.0, 10, 1), hits(36))
    far = Candidate(Config("fusion", 60, 10, 1.0, 1.0, 3), hits(30))  # 0.75 < 0.90 − SE
    selection = select_one_se([far, best], DEFAULT)
    assert selection.chosen is best and selection.within == [best]


def test_equal_means_tie_to_the_cheaper_in_the_stated_order():
    same = hits(30)
    candidates = [Candidate(Config("hybrid", 60, 100, 1.0, 1.0, 5), same),
                  Candidate(Config("fusion", 60, 100, 1.0, 1.0, 5), same),  # fusion before hybrid
                  Candidate(Config("fusion", 10, 100, 1.0, 1.0, 5, 1), same),  # two settings moved
                  Candidate(Config("fusion", 60, 50, 1.0, 1.0, 5), same),  # shallower prefetch: cheaper still
                  Candidate(Config("fusion", 60, 100, 1.0, 1.0, 5), same, num_queries=3)]  # LLM rewrites: dearest
    selection = select_one_se(candidates, DEFAULT)
    assert selection.best.config == Config("fusion", 60, 50, 1.0, 1.0, 5)
    assert selection.chosen.config == Config("fusion", 60, 50, 1.0, 1.0, 5)
    order = [c.config for c in selection.within]
    assert order.index(Config("fusion", 60, 100, 1.0, 1.0, 5)) < order.index(Config("fusion", 10, 100, 1.0, 1.0, 5, 1))
    assert order.index(Config("fusion", 60, 100, 1.0, 1.0, 5)) < order.index(Config("hybrid", 60, 100, 1.0, 1.0, 5))
    assert selection.within[-1].num_queries == 3


def test_top_k_is_dearer_than_prefetch_and_prefetch_than_moved_settings():
    small_context = Candidate(Config("hybrid", 5, 100, 0.7, 1.3, 5, 2), hits(10))
    large_context = Candidate(Config("fusion", 60, 10, 1.0, 1.0, 7), hits(10))
    assert cost_key(small_context, DEFAULT) < cost_key(large_context, DEFAULT)


def test_scores_over_different_questions_are_refused():
    with pytest.raises(ValueError, match="same questions"):
        select_one_se([Candidate(DEFAULT, hits(3, 10)), Candidate(Config("hybrid", 60, 100, 1.0, 1.0, 10), hits(3, 11))],
                      DEFAULT)


def test_the_cli_help_states_the_tune_grid():
    """`rag-lab tune --help` names TUNE_SPEC's values (the parser itself must not import them)."""
    from rag_lab.cli.main import build_parser
    from rag_lab.evaluate.tune.run import TUNE_SPEC as s

    text = " ".join(build_parser()._subparsers._group_actions[0].choices["tune"].format_help().split())
    for values in (s.fusion_k, s.prefetch, s.top_k, s.max_per_doc):
        assert f"(default {','.join(map(str, values))})" in text
    assert "(default " + ",".join(f"{d:g}:{w:g}" for d, w in s.weights) + ")" in text
    assert f"(default {','.join(s.modes)})" in text


def test_ndcg_keeps_only_top_k_values_that_fill_its_list():
    from rag_lab.evaluate.ablation.grid import GridSpec
    from rag_lab.evaluate.tune.run import ranking_top_k

    said = []
    spec = GridSpec(top_k=(3, 5, 7, 10, 20))
    assert ranking_top_k(spec, "ndcg@10", said.append).top_k == (10, 20)
    assert said and "top-k 10, 20 only" in said[0]
    assert ranking_top_k(GridSpec(top_k=(3, 5)), "ndcg@10").top_k == (10,)
    assert ranking_top_k(spec, "chunk_hit@5") is spec  # top-k is the generator's context there: a lever


def test_a_lower_mean_is_worse_only_when_the_paired_test_says_so():
    from types import SimpleNamespace

    from rag_lab.evaluate.tune.report import confirmation_verdict

    def conf(delta, p):
        return SimpleNamespace(delta=delta, p_value=p, alpha=0.05, significant=delta > 0 and p < 0.05)

    assert confirmation_verdict(conf(0.12, 1e-5)) == "significantly better"
    assert confirmation_verdict(conf(0.01, 0.4)) == "NOT significantly better"
    assert confirmation_verdict(conf(-0.005, 0.49)) == "not significantly different (lower mean)"
    assert confirmation_verdict(conf(-0.05, 1e-7)) == "significantly WORSE"


def _confirmation(pick: Config, default: Config, pick_hits: int, default_hits: int, n: int = 40):
    return _confirmation_of(pick, default, hits(pick_hits, n), hits(default_hits, n))


def test_a_confirmed_pick_is_written_and_an_unconfirmed_one_gives_way_to_the_default():
    from rag_lab.evaluate.tune.run import recommendation

    pick = Config("hybrid", 5, 25, 1.0, 1.0, 5, 1)
    default = Config("hybrid", 60, 100, 1.0, 1.0, 10)
    selection = select_one_se([Candidate(pick, hits(37))], default)

    confirmed = _confirmation(pick, default, 36, 24)  # 12 more questions hit, none fewer: p ≈ 1e-4
    assert confirmed.significant
    written = recommendation(selection, confirmed, "chunk_hit@5", "d", 40)
    assert (written.mode, written.fusion_k, written.prefetch, written.max_per_doc, written.top_k) == ("hybrid", 5, 25, 1, 5)
    assert written.top_n == written.top_k  # the retriever returns the grid's top-k and the LLM reads all of it
    assert written.provenance["adopted"] is True and written.provenance["rest_mean"] == pytest.approx(0.9)

    unconfirmed = _confirmation(pick, default, 25, 24)  # one question more: no evidence
    assert not unconfirmed.significant
    kept = recommendation(selection, unconfirmed, "chunk_hit@5", "d", 40)
    assert (kept.mode, kept.fusion_k, kept.prefetch, kept.max_per_doc, kept.num_queries) == ("hybrid", 60, 100, 0, 1)
    assert kept.top_k == kept.top_n == 7  # the generator's default context (ask --top-n), retrieved as such
    assert kept.provenance["adopted"] is False and kept.provenance["dev_pick"] == pick.id
    assert kept.provenance["rest_mean"] == pytest.approx(0.6) and kept.provenance["rest_pick_mean"] == pytest.approx(0.625)
    assert recommendation(selection, unconfirmed, "ndcg@10", "d", 40).top_k == 10  # the list nDCG@10 reads


def test_the_gate_adopts_noise_rarely_and_a_real_gain_mostly():
    """Size and power of "adopt only a confirmed pick", on chunk-hit-like 0/1 scores of 158 rest
    questions (texas_childcare_full's rest split): a pick no better than the default is adopted in at
    most α of the splits; one that hits 10 % more questions in most of them."""
    from rag_lab.evaluate.tune.run import recommendation

    pick, default = Config("hybrid", 5, 25, 1.0, 1.0, 5, 1), Config("hybrid", 60, 100, 1.0, 1.0, 10)
    selection = select_one_se([Candidate(pick, hits(37))], default)
    rng = np.random.default_rng(0)

    def adopted_share(gain: float, trials: int = 400, n: int = 158) -> float:
        adopted = 0
        for _ in range(trials):
            base = rng.random(n) < 0.8  # the default hits 80 % of the questions
            better = base | (rng.random(n) < gain / 0.2)  # the pick also hits a share of the misses
            same = rng.random(n) < 0.8  # … or, under the null, as often as the default
            picked = better if gain else same
            conf = _confirmation_of(pick, default, picked.astype(float), base.astype(float))
            adopted += recommendation(selection, conf, "chunk_hit@5", "d", 78).provenance["adopted"]
        return adopted / trials

    assert adopted_share(0.0) <= 0.05
    assert adopted_share(0.10) >= 0.8


def _confirmation_of(pick: Config, default: Config, picked: np.ndarray, control: np.ndarray):
    from rag_lab.evaluate.statistics import policy
    from rag_lab.evaluate.tune.confirm import Confirmation, Scored

    a, b = Scored(pick, picked, (0.0, 1.0)), Scored(default, control, (0.0, 1.0))
    p, decided, _ = policy.decide_pair(control, picked)
    return Confirmation("chunk_hit@5", picked.size, a, b, [b], float((picked - control).mean()), (0.0, 0.0),
                        p, decided, float("nan"), float("nan"))


def test_the_selection_says_when_the_metric_cannot_separate_the_configurations():
    configs = [Config("fusion", k, 100, 1.0, 1.0, 5) for k in (1, 10, 60)]
    tie = select_one_se([Candidate(c, hits(40)) for c in configs], DEFAULT)
    assert tie.separation("chunk_hit@5") == ("all 3 configurations tie at 1.000 on dev: chunk_hit@5 cannot tell "
                                             "them apart here")
    close = select_one_se([Candidate(configs[0], hits(36)), Candidate(configs[1], hits(35))], DEFAULT)
    assert close.separation("ndcg@10") == ("all 2 configurations are within one standard error of the best on dev "
                                           "(0.875 to 0.900): ndcg@10 cannot separate them here")
    apart = select_one_se([Candidate(configs[0], hits(36)), Candidate(configs[1], hits(30))], DEFAULT)
    assert apart.separation("chunk_hit@5") is None
    assert select_one_se([Candidate(configs[0], hits(40))], DEFAULT).separation("chunk_hit@5") is None
