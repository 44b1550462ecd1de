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
