"""Prices per model, the cost of a usage object, and totals over many."""

from __future__ import annotations

from decimal import Decimal

import pytest

from services.pricing import DEFAULT_PRICES, cost, price_for, price_table, summarize

TABLE = price_table()


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5-20250929", "sonnet"),
        ("claude-3-7-sonnet-latest", "sonnet"),
        ("claude-opus-4-5-20251101", "opus"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-opus-4-20250514", "claude-opus-4-2025"),
        ("claude-haiku-4-5", "haiku"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("Claude-3-Haiku-20240307", "claude-3-haiku"),
        ("offline demo model", "offline demo model"),
    ],
)
def test_a_model_takes_the_longest_key_its_name_contains(model: str, family: str) -> None:
    assert price_for(model, TABLE) == TABLE[family]
    assert TABLE[family]["input"] == Decimal(str(DEFAULT_PRICES[family]["input"]))


def test_unknown_models_have_no_price() -> None:
    assert price_for("gpt-9", TABLE) is None
    assert price_for(None, TABLE) is None


def test_overrides_replace_entries_and_cache_prices_follow_the_input_price() -> None:
    table = price_table(
        {
            "sonnet": {"input": 2, "output": 10},
            "my-proxy-model": {"input": "1.5", "output": 6, "cache_read": 0.05},
        }
    )
    sonnet = table["sonnet"]
    assert sonnet["cache_write_5m"] == Decimal("2.50")
    assert sonnet["cache_write_1h"] == Decimal("4")
    assert sonnet["cache_read"] == Decimal("0.2")
    assert table["my-proxy-model"]["cache_read"] == Decimal("0.05")
    assert table["my-proxy-model"]["cache_write_5m"] == Decimal("1.875")
    assert table["opus"] == TABLE["opus"], "other defaults stay"


@pytest.mark.parametrize(
    "entry",
    [
        {"input": 1},
        {"input": -1, "output": 1},
        {"input": 1, "output": True},
        {"input": 1, "output": "a lot"},
        {"input": 1, "output": 1, "cache_write": 2},
        "cheap",
    ],
)
def test_bad_price_entries_are_refused(entry: object) -> None:
    with pytest.raises(ValueError, match="MODEL_PRICES"):
        price_table({"x": entry})


PRICES = {
    "input": Decimal(1),
    "output": Decimal(2),
    "cache_write_5m": Decimal(3),
    "cache_write_1h": Decimal(4),
    "cache_read": Decimal(5),
}


def test_cost_prices_each_kind_of_token_and_splits_cache_writes_by_ttl() -> None:
    usage = {
        "input_tokens": 10,
        "output_tokens": 20,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 4000,
        "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
    }
    expected = 10 * 1 + 20 * 2 + 100 * 3 + 200 * 4 + 4000 * 5
    assert cost(usage, PRICES) == Decimal(expected) / 1_000_000
    # Without the split (older API versions), every write is a 5-minute one.
    flat = {k: v for k, v in usage.items() if k != "cache_creation"}
    assert cost(flat, PRICES) == Decimal(10 * 1 + 20 * 2 + 300 * 3 + 4000 * 5) / 1_000_000


def test_summaries_total_every_field_and_name_what_they_could_not_price() -> None:
    rows = [
        ("claude-sonnet-4-5", {"input_tokens": 1000, "output_tokens": 500}),
        ("claude-sonnet-4-5", {"input_tokens": 10, "cache_read_input_tokens": 9000}),
        ("mystery-model", {"input_tokens": 7, "output_tokens": 3}),
        ("claude-sonnet-4-5", None),  # a message still streaming, or a user message
    ]
    summary = summarize(rows, TABLE)
    assert summary["usage"] == {
        "input_tokens": 1017,
        "output_tokens": 503,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 9000,
        "total_tokens": 1017 + 503 + 9000,
        "model_calls": 3,
    }
    dollars = (1010 * 3 + 500 * 15 + Decimal("0.3") * 9000) / 1_000_000
    assert summary["cost"] == {
        "currency": "USD",
        "amount": str(dollars.quantize(Decimal("0.000001"))),
        "unpriced_models": ["mystery-model"],
    }
