"""The cost recorded per sample comes from the one price table the dry run's estimate reads
(rag_lab.models.pricing), for every spelling of an LLM's name (identity.llm_name)."""

from __future__ import annotations

import math

import pytest

from rag_lab.evaluate.plan.cost import cost_usd
from rag_lab.models.llm.identity import llm_name
from rag_lab.models.pricing import PRICES, price_for


@pytest.mark.parametrize("provider, model", sorted(PRICES))
def test_every_listed_model_costs_what_the_estimate_prices_it_at(provider, model):
    # before: a second, shorter table here gave NaN for e.g. openai:gpt-4.1 while the estimate priced it
    expected = PRICES[(provider, model)].cost(1_000_000, 100_000)
    assert cost_usd(llm_name(provider, model), 1_000_000, 100_000) == pytest.approx(expected)


def test_local_is_free_and_an_unknown_or_injected_model_is_unknown():
    assert cost_usd(llm_name("local", "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M"), 5000, 500) == 0.0
    assert math.isnan(cost_usd("openai:gpt-unknown", 10, 10))
    assert math.isnan(cost_usd("object:tests.Scripted:gen:0123abcd", 10, 10))


def test_a_bedrock_region_and_cross_region_profile_keep_the_list_price():
    base = price_for("bedrock", "amazon.nova-pro-v1:0").cost(2000, 300)
    assert cost_usd(llm_name("bedrock", "amazon.nova-pro-v1:0", "us-west-2"), 2000, 300) == pytest.approx(base)
    assert cost_usd(llm_name("bedrock", "us.amazon.nova-pro-v1:0", "us-east-1"), 2000, 300) == pytest.approx(base)


def test_another_server_behind_a_priced_name_is_not_priced():
    name = llm_name("openai", "gpt-4o-mini", "http://127.0.0.1:8080/v1")
    assert name.startswith("openai@") and math.isnan(cost_usd(name, 10, 10))
    assert math.isnan(cost_usd(llm_name("openai_compatible", "gpt-4o-mini", "http://127.0.0.1:8000/v1"), 10, 10))


def test_a_sample_costs_the_price_its_plan_resolved(monkeypatch):
    """The worker prices a recorded answer at the plan's price (resolved once per mode, from the same
    rule as cost_usd), never by looking the model up again per sample."""
    from rag_lab.datasets import QAPair
    from rag_lab.evaluate.plan.cost import price_of
    from rag_lab.evaluate.run.sample_worker import evaluate_sample
    from rag_lab.models.pricing import Price

    class Answerer:
        model_id = llm_name("openai", "gpt-5-mini")

        def answer(self, question):
            return {"answer": "It is $4,106.", "contexts": [], "latency": {},
                    "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 100_000}}, False

    class Scorer:
        def score(self, record):
            return {}, {}

    price = price_of(Answerer.model_id)
    assert price == price_for("openai", "gpt-5-mini") and price_of("openai@http://other/v1:gpt-5-mini") is None
    expected = cost_usd(Answerer.model_id, 1_000_000, 100_000)
    assert expected > 0
    monkeypatch.setattr("rag_lab.models.pricing.price_for", lambda *args: pytest.fail("priced again per sample"))
    pair = QAPair("q1", "What is the limit?", "$4,106.")
    record = evaluate_sample(pair, {}, "bm25", Answerer(), Scorer(), price)
    assert record["cost_usd"] == pytest.approx(expected)
    assert evaluate_sample(pair, {}, "bm25", Answerer(), Scorer(), Price(2.0, 10.0))["cost_usd"] == pytest.approx(3.0)
    assert math.isnan(evaluate_sample(pair, {}, "bm25", Answerer(), Scorer(), None)["cost_usd"])
